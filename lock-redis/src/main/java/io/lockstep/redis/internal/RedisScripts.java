package io.lockstep.redis.internal;

import java.util.List;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;

/** The lock scripts. Each runs atomically on the server. */
final class RedisScripts {

    private RedisScripts() {}

    /**
     * Loads every lock script into the server's cache: on one server (or a Sentinel's primary) in one
     * pipelined round trip, on a cluster into every primary. {@code sampleKey} routes the pipeline.
     */
    static void loadAll(UnifiedJedis jedis, String sampleKey) {
        if (jedis instanceof JedisCluster) {
            all().forEach(script -> script.load(jedis)); // broadcast to every primary
            return;
        }
        try (AbstractPipeline pipeline = jedis.pipelined()) {
            List<Response<String>> loaded = all().stream()
                    .map(script -> pipeline.scriptLoad(script.source(), sampleKey))
                    .toList();
            pipeline.sync();
            loaded.forEach(Response::get); // throws if a load failed
        }
    }

    /** Every script of the backend, in the order {@link #loadAll} sends them. */
    static List<LuaScript> all() {
        return List.of(ACQUIRE, EXTEND, EXTEND_MANY, RELEASE, INSPECT);
    }

    /**
     * KEYS[1] lock key, KEYS[2] fence counter; ARGV[1] the value to store (owner token, a space, the
     * holder), ARGV[2] lease time in ms.
     * Free: SET token PX ttl and INCR the fence, return {1, fence}. Already ours (a retried attempt
     * whose reply was lost): refresh the TTL and return the same fence, which no one else can have
     * incremented while we held the lock. Held by another: return {0, its remaining ms}.
     */
    static final LuaScript ACQUIRE = new LuaScript(
            """
            local holder = redis.call('GET', KEYS[1])
            if holder == false then
              redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
              return {1, redis.call('INCR', KEYS[2])}
            end
            if holder == ARGV[1] then
              redis.call('PEXPIRE', KEYS[1], ARGV[2])
              return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
            end
            return {0, redis.call('PTTL', KEYS[1])}
            """);

    /** KEYS[1] lock key; ARGV[1] the stored value, ARGV[2] lease time in ms. 1 if extended, 0 if not ours. */
    static final LuaScript EXTEND = new LuaScript(
            """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              redis.call('PEXPIRE', KEYS[1], ARGV[2])
              return 1
            end
            return 0
            """);

    /**
     * KEYS[i] lock keys; ARGV[2i-1] the stored value and ARGV[2i] lease time in ms of KEYS[i]. For each key,
     * what {@link #EXTEND} does, in one round trip: returns a list with 1 where the key was extended
     * and 0 where it is not ours (anymore).
     */
    static final LuaScript EXTEND_MANY = new LuaScript(
            """
            local result = {}
            for i = 1, #KEYS do
              if redis.call('GET', KEYS[i]) == ARGV[2 * i - 1] then
                redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
                result[i] = 1
              else
                result[i] = 0
              end
            end
            return result
            """);

    /**
     * KEYS[1] lock key; ARGV[1] the stored value, ARGV[2] release channel, ARGV[3] lock name.
     * Compare-and-delete, then tell waiters. 1 if released, 0 if not ours. The notice is sent with
     * {@code pcall}: a script is not rolled back when a later call fails, so a {@code PUBLISH} the user
     * may not do (a Redis 7 ACL user without channel permission) must not turn a done delete into an
     * error; waiters then find the lock free by polling.
     */
    static final LuaScript RELEASE = new LuaScript(
            """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              redis.call('DEL', KEYS[1])
              redis.pcall('PUBLISH', ARGV[2], ARGV[3])
              return 1
            end
            return 0
            """);

    /**
     * A snapshot for operators: KEYS[1] lock key, KEYS[2] fence counter. Returns {PTTL of the lock (-2 when
     * free), the fence counter or false, the holder or false}: the holder is what follows the owner token
     * and a space in the lock's value (false for a value without one). Reads only; the owner token never
     * leaves the server.
     */
    static final LuaScript INSPECT = new LuaScript(
            """
            local value = redis.call('GET', KEYS[1])
            local holder = false
            if value then
              local space = string.find(value, ' ', 1, true)
              if space then
                holder = string.sub(value, space + 1)
              end
            end
            return {redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2]), holder}
            """);
}
