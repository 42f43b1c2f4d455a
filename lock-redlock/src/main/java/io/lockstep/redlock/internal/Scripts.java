package io.lockstep.redlock.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The constant Lua scripts run on each node. Lock keys, fence keys, values and numbers only ever
 * travel as KEYS and ARGV; nothing is interpolated into a script.
 */
final class Scripts {

    /**
     * Fenced acquire. KEYS: lock key, fence key. ARGV: value, TTL in ms, proposed fence, deadline in
     * the node's wall-clock ms (0: none). Grants only if the key is free and the proposal is greater than
     * the node's counter, then stores both. A request the node runs after its deadline (the node was
     * paused, or the network or a blocked connection set-up held it) is refused, so a client that stopped
     * waiting never leaves a late grant behind. Returns {1, counter} granted, {0, counter, pttl, holder hash} held, {2, counter}
     * stale, {3, counter, node time} too late.
     */
    static final Script ACQUIRE = new Script(
            """
            local deadline = tonumber(ARGV[4])
            if deadline > 0 then
              local t = redis.call('TIME')
              local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
              if now > deadline then
                return {3, 0, now}
              end
            end
            local raw = redis.call('GET', KEYS[2])
            local counter = 0
            if raw then
              counter = tonumber(raw)
              if not counter then
                return redis.error_reply('fence counter is not a number')
              end
            end
            local holder = redis.call('GET', KEYS[1])
            if holder then
              return {0, counter, redis.call('PTTL', KEYS[1]), string.sub(redis.sha1hex(holder), 1, 16)}
            end
            if tonumber(ARGV[3]) <= counter then
              return {2, counter}
            end
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
            redis.call('SET', KEYS[2], ARGV[3])
            return {1, counter}
            """);

    /** The spec's extend: KEYS lock key; ARGV value, TTL in ms. 1 if extended. */
    static final Script EXTEND = new Script(
            """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              return redis.call('PEXPIRE', KEYS[1], ARGV[2])
            end
            return 0
            """);

    /**
     * {@link #EXTEND} for many keys in one round trip: KEYS[i] lock keys; ARGV[2i-1] value and ARGV[2i]
     * TTL in ms of KEYS[i]. Returns a list with 1 where the key was extended, 0 where it is not ours.
     */
    static final Script EXTEND_MANY = new Script(
            """
            local result = {}
            for i = 1, #KEYS do
              if redis.call('GET', KEYS[i]) == ARGV[2 * i - 1] then
                result[i] = redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
              else
                result[i] = 0
              end
            end
            return result
            """);

    /**
     * The spec's release (compare-and-delete), then a notice to waiters: KEYS lock key; ARGV value,
     * release channel. 1 if deleted. The notice is sent in {@code pcall}: a user without permission on
     * the channel (Redis 7 ACLs) still releases, and the release is never reported as failed.
     */
    static final Script RELEASE = new Script(
            """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              redis.call('DEL', KEYS[1])
              redis.pcall('PUBLISH', ARGV[2], KEYS[1])
              return 1
            end
            return 0
            """);

    /**
     * Cleanup of a round that did not win: compare-and-delete without a notice (KEYS lock key; ARGV
     * value; 1 if deleted). What it frees was never a holder's lock, so no waiter is woken for it: the
     * waiter whose own failed round it cleans up would otherwise try again at once, without end.
     */
    static final Script CLEANUP = new Script(
            """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              return redis.call('DEL', KEYS[1])
            end
            return 0
            """);

    /** Cleanup of an unknown outcome: KEYS lock key; ARGV owner token prefix, release channel. 1 if deleted. */
    static final Script ABANDON = new Script(
            """
            local value = redis.call('GET', KEYS[1])
            if value and string.sub(value, 1, string.len(ARGV[1])) == ARGV[1] then
              redis.call('DEL', KEYS[1])
              redis.pcall('PUBLISH', ARGV[2], KEYS[1])
              return 1
            end
            return 0
            """);

    /**
     * What one node knows of a lock, for {@code inspect}: KEYS lock key, fence key. Returns {value or nil,
     * PTTL of the lock key, fence counter or nil}. Reads only.
     */
    static final Script INSPECT = new Script(
            """
            return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2])}
            """);

    private Scripts() {}

    /** A script and its SHA-1, for EVALSHA with a fallback to EVAL. */
    record Script(String source, String sha) {
        Script(String source) {
            this(source, sha1(source));
        }
    }

    /** How {@link #ACQUIRE} names the value that holds a key in a held reply: the first 16 hex digits of its SHA-1. */
    static String holderHash(String value) {
        return sha1(value).substring(0, 16);
    }

    private static String sha1(String source) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            return HexFormat.of().formatHex(digest.digest(source.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every JVM", e);
        }
    }
}
