package io.lockstep.redis;

import io.lockstep.redis.internal.LuaScript;
import io.lockstep.redis.internal.RedisErrors;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import redis.clients.jedis.UnifiedJedis;

/**
 * A resource protected by fencing tokens: a write is accepted only if its fence is at least the
 * highest fence already written to that key, so a holder that paused past its lease and wakes up
 * with an old fence cannot overwrite the work of the holder that came after it.
 *
 * <pre>{@code
 * try (Lease lease = locks.acquire("table-12", options)) {
 *     boolean written = store.write("booking:table-12", lease.fencingToken().getAsLong(), "Charlie");
 * }
 * }</pre>
 *
 * <p>Each key is a hash with fields {@code fence} and {@code value}. Fences must stay below 2^53
 * (Lua numbers are doubles). Thread-safe.
 */
public final class RedisFencedStore {

    private static final LuaScript WRITE = new LuaScript(
            """
            local last = tonumber(redis.call('HGET', KEYS[1], 'fence') or '-1')
            if tonumber(ARGV[1]) < last then
              return 0
            end
            redis.call('HSET', KEYS[1], 'fence', ARGV[1], 'value', ARGV[2])
            return 1
            """);

    private static final long MAX_FENCE = (1L << 53) - 1;

    private final UnifiedJedis jedis;
    private final String where;

    /** A store on {@code jedis}; {@code where} names the server in error messages. */
    public RedisFencedStore(UnifiedJedis jedis, String where) {
        this.jedis = Objects.requireNonNull(jedis, "jedis");
        this.where = Objects.requireNonNull(where, "where");
    }

    /**
     * Writes {@code value} under {@code key} if {@code fence} is not older than the last accepted one.
     *
     * @return true if written, false if rejected as stale
     */
    public boolean write(String key, long fence, String value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        if (fence < 0 || fence > MAX_FENCE) {
            throw new IllegalArgumentException("fence must be between 0 and 2^53-1, was " + fence);
        }
        Object reply = RedisErrors.translate(
                where,
                "fenced write of '" + key + "'",
                () -> WRITE.run(jedis, List.of(key), List.of(Long.toString(fence), value)));
        return ((Long) reply) == 1;
    }

    /** The value last accepted under {@code key}, if any. */
    public Optional<String> read(String key) {
        return Optional.ofNullable(
                RedisErrors.translate(where, "read of '" + key + "'", () -> jedis.hget(key, "value")));
    }

    /** The highest fence accepted under {@code key}, if any. */
    public Optional<Long> lastFence(String key) {
        String raw = RedisErrors.translate(where, "read of '" + key + "'", () -> jedis.hget(key, "fence"));
        return Optional.ofNullable(raw).map(Long::parseLong);
    }
}
