package io.lockstep.redis.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * A constant Lua script run with {@code EVALSHA}, loaded with {@code EVAL} when the server does not
 * know it yet (after a restart or {@code SCRIPT FLUSH}). Keys and arguments are always passed as
 * KEYS/ARGV, never spliced into the script.
 */
public final class LuaScript {

    private final String source;
    private final String sha1;

    /** A script from its source. */
    public LuaScript(String source) {
        this.source = source;
        this.sha1 = sha1Hex(source);
    }

    /** Runs the script on {@code jedis}. */
    public Object run(UnifiedJedis jedis, List<String> keys, List<String> args) {
        try {
            return jedis.evalsha(sha1, keys, args);
        } catch (JedisNoScriptException e) {
            return jedis.eval(source, keys, args);
        }
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
