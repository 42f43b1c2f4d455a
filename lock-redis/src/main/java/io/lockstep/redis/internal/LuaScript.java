package io.lockstep.redis.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * A constant Lua script run with {@code EVALSHA}. The backend loads its scripts up front
 * ({@link RedisScripts#loadAll}); a server that lost them (a restart, {@code SCRIPT FLUSH}) answers
 * {@code NOSCRIPT} once, and then every script is loaded again, so a lease's first renewal after a
 * restart does not pay a second miss. Keys and arguments are always passed as KEYS/ARGV, never
 * spliced into the script.
 */
public final class LuaScript {

    private final String source;
    private final String sha1;

    /** A script from its source. */
    public LuaScript(String source) {
        this.source = source;
        this.sha1 = sha1Hex(source);
    }

    /** Runs the script on {@code jedis}, loading every script of the set again if the server lost them. */
    public Object run(UnifiedJedis jedis, List<String> keys, List<String> args) {
        return run(jedis, keys, args, () -> {});
    }

    /**
     * Runs the script on {@code jedis}; on {@code NOSCRIPT} runs {@code reload} (which loads this
     * script's set, so the next script does not miss too) and this script by {@code EVAL}.
     */
    Object run(UnifiedJedis jedis, List<String> keys, List<String> args, Runnable reload) {
        try {
            return jedis.evalsha(sha1, keys, args);
        } catch (JedisNoScriptException e) {
            reload.run();
            return jedis.eval(source, keys, args);
        }
    }

    /** Loads the script into the server's cache (on a cluster: into every primary's). */
    void load(UnifiedJedis jedis) {
        jedis.scriptLoad(source);
    }

    /** The script's source, for {@code EVAL}. */
    String source() {
        return source;
    }

    /** The script's SHA-1, as Redis names it. */
    public String sha1() {
        return sha1;
    }

    private static String sha1Hex(String text) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by the Java platform", e);
        }
    }
}
