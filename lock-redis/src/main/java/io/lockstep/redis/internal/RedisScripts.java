package io.lockstep.redis.internal;

import java.time.Duration;
import java.util.List;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;

/** The lock scripts. Each runs atomically on the server. */
final class RedisScripts {

    private RedisScripts() {}

    /**
     * How long a grant waits in its waiter's inbox: a waiter that was not blocked on it when it came takes
     * the grant from the notice or its next refresh instead, and the inbox then goes by itself.
     */
    static final Duration INBOX_TTL = Duration.ofSeconds(5);

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
        return List.of(ACQUIRE, EXTEND, EXTEND_MANY, RELEASE, WITHDRAW, INSPECT);
    }

    /**
     * The waiter queue's helpers, shared by the scripts that grant or withdraw ({@link #ACQUIRE}, {@link
     * #RELEASE}, {@link #WITHDRAW}). KEYS[1] lock key, KEYS[2] fence counter, KEYS[3] the queue (a sorted
     * set of owner tokens scored by arrival), KEYS[4] the entries (a hash: owner token to {@code <deadline
     * ms on the server's clock> <lease ms> <value to store>}, and {@code <owner token>:lane} to {@code 1} if
     * the waiter said at its latest refresh that it blocks on its inbox, else {@code 0}). An entry past its
     * deadline is a dead waiter.
     *
     * <p>{@code next_waiter(take, leaving)} reads the first 100 waiters once and returns the first live one
     * other than {@code leaving} (token, lease, value, whether it blocks on its inbox; nil if none),
     * removing in one {@code ZREM} and one {@code HDEL} the expired ones before it, {@code leaving}, and the
     * one returned if {@code take}. {@code
     * grant_next(channel, name, leaving)} hands the free lock to that waiter exactly as an acquire would (SET
     * PX with the waiter's lease time over the released value, INCR the fence), puts the fence in the
     * waiter's inbox ({@link RedisKeys#inboxKey}, a list that lives {@link #INBOX_TTL}, where a waiter
     * blocked on it takes it at once: {@link GrantLane}) and, unless the waiter blocks on that inbox and the
     * push succeeded, announces the grant as {@code <name> US <sha1 of the token> US <fence>} (US is the
     * control character 31, which no lock name contains): a notice is read by every subscribed client, and
     * its one reader that cares would take the grant from its inbox anyway. False if nobody live waits.
     * The inbox is named in no KEYS: it is built from the lock's key and shares its hash slot, and it is
     * written with {@code pcall}, like the notice, so a slot in migration (where a key the node lacks is
     * "not local") costs the waiter the fast delivery, never the release.
     *
     * <p>No script touches a key again after a command that may have deleted it (a {@code DEL}, or the
     * {@code ZREM}/{@code HDEL} that empties a queue): while a cluster slot migrates, a script runs only if
     * every key it names exists on the node, and a key it deleted itself would then be "not local" halfway
     * through, after writes that are not rolled back.
     */
    private static final String QUEUE_FUNCTIONS =
            """
            local function now_ms()
              local t = redis.call('TIME')
              return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            end
            local function next_waiter(take, leaving)
              local tokens = redis.call('ZRANGE', KEYS[3], 0, 99)
              local remove = {}
              if leaving then
                remove[1] = leaving
              end
              local found, lease, value, lane
              if #tokens > 0 then
                local now = now_ms()
                local fields = {}
                for i = 1, #tokens do
                  fields[i] = tokens[i]
                  fields[#tokens + i] = tokens[i] .. ':lane'
                end
                local entries = redis.call('HMGET', KEYS[4], unpack(fields))
                for i = 1, #tokens do
                  if tokens[i] ~= leaving then
                    local deadline, l, v
                    if entries[i] then
                      deadline, l, v = string.match(entries[i], '^(%d+) (%d+) (.*)$')
                    end
                    if deadline and tonumber(deadline) >= now then
                      found, lease, value, lane = tokens[i], l, v, entries[#tokens + i] == '1'
                      if take then
                        remove[#remove + 1] = found
                      end
                      break
                    end
                    remove[#remove + 1] = tokens[i]
                  end
                end
              end
              if #remove > 0 then
                local removeFields = {}
                for i = 1, #remove do
                  removeFields[2 * i - 1] = remove[i]
                  removeFields[2 * i] = remove[i] .. ':lane'
                end
                redis.call('ZREM', KEYS[3], unpack(remove))
                redis.call('HDEL', KEYS[4], unpack(removeFields))
              end
              return found, lease, value, lane
            end
            local function grant_next(channel, name, leaving)
              if redis.call('EXISTS', KEYS[3]) == 0 then
                return false
              end
              local token, lease, value, lane = next_waiter(true, leaving)
              if not token then
                return false
              end
              redis.call('SET', KEYS[1], value, 'PX', lease)
              local fence = redis.call('INCR', KEYS[2])
              local hash = redis.sha1hex(token)
              local inbox = KEYS[1] .. ':grant:' .. hash
              local pushed = redis.pcall('RPUSH', inbox, fence)
              redis.pcall('PEXPIRE', inbox, INBOX_TTL_MS)
              if not (lane and type(pushed) == 'number') then
                redis.pcall('PUBLISH', channel, name .. '\\31' .. hash .. '\\31' .. fence)
              end
              return true
            end
            """
                    .replace("INBOX_TTL_MS", Long.toString(INBOX_TTL.toMillis()));

    /**
     * KEYS as in {@link #QUEUE_FUNCTIONS}; ARGV[1] the value to store (owner token, a space, the holder),
     * ARGV[2] lease time in ms, ARGV[3] the queue entry's time to live in ms ({@code 0}: do not queue),
     * ARGV[4] the owner token, ARGV[5] the release channel, ARGV[6] the lock name, ARGV[7] {@code 1} if
     * the waiter will block on its inbox until its next refresh ({@link GrantLane}), so that a grant to it
     * needs no notice (absent or anything else: it waits for notices).
     *
     * <p>Free and nobody queued (the uncontended path: one {@code EXISTS} more than a bare acquire): SET
     * value PX ttl and INCR the fence, return {1, fence}. Free with a queue: granted only to the first
     * live waiter; if that is someone else, the lock is handed to them as a release would, so an acquire
     * without a queue entry never jumps the queue. Already ours (granted by a release, or a retried
     * attempt whose reply was lost): refresh the TTL and return the same fence, which no one else can
     * have incremented while we held the lock. Otherwise, with ARGV[3] > 0, join the queue's tail (or keep
     * our place) with an entry that lives ARGV[3] ms; return {0, the holder's remaining ms, the fence
     * counter now}: a grant whose fence is above that counter happened after this call. (A free lock's
     * key is absent, so in a migrating cluster slot the free branch never runs: the script is answered
     * TRYAGAIN.)
     */
    static final LuaScript ACQUIRE = new LuaScript(
            QUEUE_FUNCTIONS
                    + """
            local holder = redis.call('GET', KEYS[1])
            if holder == false then
              if redis.call('EXISTS', KEYS[3]) == 0 then
                redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
                return {1, redis.call('INCR', KEYS[2])}
              end
              local first = next_waiter(false, nil)
              if not first or first == ARGV[4] then
                redis.call('ZREM', KEYS[3], ARGV[4])
                redis.call('HDEL', KEYS[4], ARGV[4], ARGV[4] .. ':lane')
                redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
                return {1, redis.call('INCR', KEYS[2])}
              end
              grant_next(ARGV[5], ARGV[6], nil)
            elseif holder == ARGV[1] then
              redis.call('PEXPIRE', KEYS[1], ARGV[2])
              return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
            end
            if ARGV[3] ~= '0' then
              local ttl = tonumber(ARGV[3])
              if not redis.call('ZSCORE', KEYS[3], ARGV[4]) then
                local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
                redis.call('ZADD', KEYS[3], (tonumber(last[2]) or 0) + 1, ARGV[4])
              end
              redis.call('HSET', KEYS[4], ARGV[4], (now_ms() + ttl) .. ' ' .. ARGV[2] .. ' ' .. ARGV[1],
                ARGV[4] .. ':lane', ARGV[7] == '1' and '1' or '0')
              for i = 3, 4 do
                if redis.call('PTTL', KEYS[i]) < ttl then
                  redis.call('PEXPIRE', KEYS[i], ttl)
                end
              end
            end
            return {0, redis.call('PTTL', KEYS[1]), tonumber(redis.call('GET', KEYS[2]) or '0')}
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
     * KEYS as in {@link #QUEUE_FUNCTIONS}; ARGV[1] the stored value, ARGV[2] release channel, ARGV[3] lock
     * name. Compare-and-release: the lock goes to the first live waiter ({@code grant_next}, in the same
     * script: the handoff is atomic with the release), or, with nobody queued, the key is deleted and the
     * release announced with the name alone. 1 if released, 0 if not ours. Notices are sent with {@code
     * pcall}: a script is not rolled back when a later call fails, so a {@code PUBLISH} the user may not do
     * (a Redis 7 ACL user without channel permission) must not turn a done release into an error; waiters
     * then learn of the grant or the free lock by their next refresh.
     */
    static final LuaScript RELEASE = new LuaScript(
            QUEUE_FUNCTIONS
                    + """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              if not grant_next(ARGV[2], ARGV[3], nil) then
                redis.call('DEL', KEYS[1])
                redis.pcall('PUBLISH', ARGV[2], ARGV[3])
              end
              return 1
            end
            return 0
            """);

    /**
     * A waiter leaves: KEYS as in {@link #QUEUE_FUNCTIONS}; ARGV[1] the owner token, ARGV[2] release
     * channel, ARGV[3] lock name. Removes the token's queue entry and, if a release granted the lock to it
     * meanwhile (its value is the token, a space and a holder, or the token alone), releases that grant
     * and hands it on, all in one script, so a waiter that gives up never keeps a lock it did not take.
     * 1 if a grant was released, 0 if not.
     */
    static final LuaScript WITHDRAW = new LuaScript(
            QUEUE_FUNCTIONS
                    + """
            local value = redis.call('GET', KEYS[1])
            if value and (value == ARGV[1] or string.sub(value, 1, #ARGV[1] + 1) == ARGV[1] .. ' ') then
              if not grant_next(ARGV[2], ARGV[3], ARGV[1]) then
                -- (our entry, if any, went with grant_next's scan)
                redis.call('DEL', KEYS[1])
                redis.pcall('PUBLISH', ARGV[2], ARGV[3])
              end
              return 1
            end
            redis.call('ZREM', KEYS[3], ARGV[1])
            redis.call('HDEL', KEYS[4], ARGV[1], ARGV[1] .. ':lane')
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
