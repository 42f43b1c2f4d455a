package io.lockstep.bench;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.params.SetParams;

/**
 * The floors: raw Jedis doing the round trips a Lockstep provider does, the same Lua scripts
 * (copied here byte for byte, so a floor uses nothing of Lockstep), on the same number of nodes,
 * in the same fan-out style, and nothing else. A benchmark run checks the copies: after a Lockstep
 * trial every server must hold these exact scripts in its cache ({@code SCRIPT EXISTS}), and the
 * commands per operation of a floor and of its provider must be the same.
 */
final class RawFloors {

    /** lock-redis's queue functions, which its acquire and release scripts begin with. */
    private static final String REDIS_QUEUE_FUNCTIONS =
            """
            local function entry_key(hash)
              return KEYS[1] .. ':waiter:' .. hash
            end
            local function first_live(skip)
              local hashes = redis.call('LRANGE', KEYS[3], 0, 99)
              for i = 1, #hashes do
                if hashes[i] ~= skip then
                  local entry = redis.pcall('GET', entry_key(hashes[i]))
                  if type(entry) == 'string' then
                    return i, hashes[i], entry, #hashes
                  end
                end
              end
              return nil, nil, nil, #hashes
            end
            local function take_entry(hash)
              local key = entry_key(hash)
              local entry = redis.pcall('GETDEL', key)
              if type(entry) == 'table' and entry.err then
                entry = redis.pcall('GET', key)
                if type(entry) == 'string' then
                  redis.call('DEL', key)
                end
              end
              if type(entry) == 'string' then
                return entry
              end
              return nil
            end
            local function grant_next(channel, name, leaving)
              local hash, entry
              for _ = 1, 100 do
                hash = redis.pcall('LPOP', KEYS[3])
                if type(hash) ~= 'string' then
                  return false
                end
                if hash ~= leaving then
                  entry = take_entry(hash)
                  if entry then
                    break
                  end
                end
              end
              if not entry then
                return false
              end
              local space = string.find(entry, ' ', 2, true)
              redis.call('SET', KEYS[1], string.sub(entry, space + 1), 'PX', string.sub(entry, 2, space - 1))
              local fence = redis.call('INCR', KEYS[2])
              local inbox = KEYS[1] .. ':grant:' .. hash
              local pushed = redis.pcall('RPUSH', inbox, fence)
              redis.pcall('PEXPIRE', inbox, 5000)
              if not (string.byte(entry, 1) == 49 and type(pushed) == 'number') then
                redis.pcall('PUBLISH', channel, name .. '\\31' .. hash .. '\\31' .. fence)
              end
              return true
            end
            local function join()
              local entry = (ARGV[7] == '1' and '1' or '0') .. ARGV[2] .. ' ' .. ARGV[1]
              local added = redis.pcall('SET', entry_key(ARGV[4]), entry, 'PX', ARGV[3], 'NX')
              if type(added) == 'table' and added.err then
                return
              end
              if not added then
                redis.call('SET', entry_key(ARGV[4]), entry, 'PX', ARGV[3])
                if redis.pcall('LPOS', KEYS[3], ARGV[4]) ~= false then
                  redis.call('PEXPIRE', KEYS[3], ARGV[3])
                  return
                end
                -- Listed nowhere, though its entry lives (taken off the list while a migrating slot
                -- refused its entry to a script): join the tail again.
              end
              redis.call('RPUSH', KEYS[3], ARGV[4])
              redis.call('PEXPIRE', KEYS[3], ARGV[3])
            end
            """;

    /** lock-redis's acquire script, as in {@code io.lockstep.redis.internal.RedisScripts}. */
    static final String REDIS_ACQUIRE = REDIS_QUEUE_FUNCTIONS
            + """
            local holder = redis.call('GET', KEYS[1])
            if holder == false then
              local i, hash, entry, read = first_live(nil)
              if not i or hash == ARGV[4] then
                if read > 0 then
                  redis.call('LTRIM', KEYS[3], i or read, -1)
                  if ARGV[4] ~= '' then
                    redis.pcall('DEL', entry_key(ARGV[4]))
                  end
                end
                redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
                return {1, redis.call('INCR', KEYS[2])}
              end
              if ARGV[3] ~= '0' then
                join()
              end
              grant_next(ARGV[5], ARGV[6], nil)
            elseif holder == ARGV[1] then
              redis.call('PEXPIRE', KEYS[1], ARGV[2])
              return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
            elseif ARGV[3] ~= '0' then
              join()
            end
            return {0, redis.call('PTTL', KEYS[1]), tonumber(redis.call('GET', KEYS[2]) or '0')}
            """;

    /** lock-redis's release script. */
    static final String REDIS_RELEASE = REDIS_QUEUE_FUNCTIONS
            + """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              if not grant_next(ARGV[2], ARGV[3], nil) then
                redis.call('DEL', KEYS[1])
                redis.pcall('PUBLISH', ARGV[2], ARGV[3])
              end
              return 1
            end
            return 0
            """;

    /**
     * The arguments of lock-redis's acquire script for an acquire that does not queue: the value, the
     * lease time, no queue entry (0), no token hash, the release channel and the name.
     */
    static List<String> redisAcquireArgs(String token, String ttlMillis, String channel, String name) {
        return List.of(token, ttlMillis, "0", "", channel, name);
    }

    /** The three keys of lock-redis's scripts for {@code lockKey} ({@code <prefix>{name}}): lock, fence, wait list. */
    static List<String> redisKeys(String lockKey) {
        return List.of(lockKey, lockKey + ":fence", lockKey + ":waitlist");
    }

    /** lock-redlock's fenced acquire script, as in {@code io.lockstep.redlock.internal.Scripts}. */
    static final String REDLOCK_ACQUIRE =
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
            """;

    /** lock-redlock's release script. */
    static final String REDLOCK_RELEASE =
            """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              redis.call('DEL', KEYS[1])
              redis.pcall('PUBLISH', ARGV[2], KEYS[1])
              return 1
            end
            return 0
            """;

    /** The classic hand-written lock's release: compare and delete. */
    static final String COMPARE_AND_DELETE =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

    private static final String TTL_MILLIS = "30000";
    private static final String PREFIX = "floor:";

    private RawFloors() {}

    static String sha1(String script) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(script.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every JVM", e);
        }
    }

    /**
     * The lock anyone writes by hand with Jedis: {@code SET NX PX}, then compare-and-delete by
     * {@code EVALSHA}. Unfenced and without release notices, so cheaper than any Lockstep provider:
     * a reference, not a floor.
     */
    static final class SetNx implements Contender {
        private final JedisPooled jedis;
        private final String releaseSha;

        SetNx(HostAndPort node) {
            this.jedis = new JedisPooled(node);
            this.releaseSha = jedis.scriptLoad(COMPARE_AND_DELETE);
        }

        @Override
        public void acquireRelease(Caller caller) {
            String key = PREFIX + caller.name;
            String token = UUID.randomUUID().toString();
            if (!"OK".equals(jedis.set(key, token, SetParams.setParams().nx().px(30_000)))) {
                throw new IllegalStateException("lock '" + caller.name + "' was not free");
            }
            if (!Long.valueOf(1).equals(jedis.evalsha(releaseSha, List.of(key), List.of(token)))) {
                throw new IllegalStateException("release of '" + caller.name + "' freed nothing");
            }
        }

        @Override
        public void close() {
            jedis.close();
        }
    }

    /** lock-redis's round trips by raw Jedis: its acquire script, then its release script, by EVALSHA. */
    static final class Redis implements Contender {
        private final JedisPooled jedis;
        private final String acquireSha;
        private final String releaseSha;

        Redis(HostAndPort node) {
            this.jedis = new JedisPooled(node);
            this.acquireSha = jedis.scriptLoad(REDIS_ACQUIRE);
            this.releaseSha = jedis.scriptLoad(REDIS_RELEASE);
        }

        @Override
        public void acquireRelease(Caller caller) {
            String lockKey = PREFIX + "{" + caller.name + "}";
            String token = UUID.randomUUID().toString();
            List<?> reply = (List<?>) jedis.evalsha(
                    acquireSha,
                    redisKeys(lockKey),
                    redisAcquireArgs(token, TTL_MILLIS, PREFIX + "released", caller.name));
            if (!Long.valueOf(1).equals(reply.get(0))) {
                throw new IllegalStateException("lock '" + caller.name + "' was not free: " + reply);
            }
            Object released =
                    jedis.evalsha(releaseSha, redisKeys(lockKey), List.of(token, PREFIX + "released", caller.name));
            if (!Long.valueOf(1).equals(released)) {
                throw new IllegalStateException("release of '" + caller.name + "' freed nothing");
            }
        }

        @Override
        public void close() {
            jedis.close();
        }
    }

    /**
     * lock-redlock's round trips by raw Jedis on N nodes: one connection per node from its pool, the
     * fenced acquire script written to every node and then every reply read, the same for the release
     * script. The acquire carries a deadline in each node's clock, as lock-redlock's does (so the
     * script reads {@code TIME}), from an offset measured once.
     */
    static final class Redlock implements Contender {
        private final List<JedisPool> pools = new ArrayList<>();
        private final long[] clockOffsetMillis;
        private final String acquireSha;
        private final String releaseSha;

        Redlock(List<HostAndPort> nodes) {
            this.clockOffsetMillis = new long[nodes.size()];
            String acquire = null;
            String release = null;
            for (int i = 0; i < nodes.size(); i++) {
                JedisPool pool =
                        new JedisPool(nodes.get(i).getHost(), nodes.get(i).getPort());
                pools.add(pool);
                try (Jedis jedis = pool.getResource()) {
                    acquire = jedis.scriptLoad(REDLOCK_ACQUIRE);
                    release = jedis.scriptLoad(REDLOCK_RELEASE);
                    long before = System.currentTimeMillis();
                    List<String> time = jedis.time();
                    long after = System.currentTimeMillis();
                    clockOffsetMillis[i] = Long.parseLong(time.get(0)) * 1000
                            + Long.parseLong(time.get(1)) / 1000
                            - (before + after) / 2;
                }
            }
            this.acquireSha = acquire;
            this.releaseSha = release;
        }

        @Override
        public void acquireRelease(Caller caller) {
            String lockKey = PREFIX + caller.name;
            String value = UUID.randomUUID() + ":1";
            String fence = Long.toString(caller.fence + 1);
            int n = pools.size();
            Jedis[] connections = new Jedis[n];
            boolean done = false;
            try {
                long now = System.currentTimeMillis();
                for (int i = 0; i < n; i++) {
                    connections[i] = pools.get(i).getResource();
                    String deadline = Long.toString(now + clockOffsetMillis[i] + 1_000);
                    send(
                            connections[i],
                            acquireSha,
                            List.of(lockKey, lockKey + "\u0000fence"),
                            List.of(value, TTL_MILLIS, fence, deadline));
                }
                for (int i = 0; i < n; i++) {
                    List<?> reply = (List<?>) connections[i].getConnection().getOne();
                    if (!Long.valueOf(1).equals(reply.get(0))) {
                        throw new IllegalStateException(
                                "node " + (i + 1) + " did not grant '" + caller.name + "': " + reply);
                    }
                }
                caller.fence++;
                for (int i = 0; i < n; i++) {
                    send(connections[i], releaseSha, List.of(lockKey), List.of(value, PREFIX + "\u0000released"));
                }
                for (int i = 0; i < n; i++) {
                    if (!Long.valueOf(1).equals(connections[i].getConnection().getOne())) {
                        throw new IllegalStateException("node " + (i + 1) + " did not release '" + caller.name + "'");
                    }
                }
                done = true;
            } finally {
                for (Jedis jedis : connections) {
                    if (jedis != null) {
                        if (!done) {
                            jedis.getConnection().setBroken(); // a reply may still be due: never reuse it
                        }
                        jedis.close();
                    }
                }
            }
        }

        /** Writes EVALSHA and flushes it without reading the reply. */
        private static void send(Jedis jedis, String sha, List<String> keys, List<String> args) {
            CommandArguments command =
                    new CommandArguments(Protocol.Command.EVALSHA).add(sha).add(keys.size());
            keys.forEach(command::key);
            args.forEach(command::add);
            Connection connection = jedis.getConnection();
            connection.sendCommand(command);
            connection.getMany(0); // flushes; reads nothing
        }

        @Override
        public void close() {
            pools.forEach(JedisPool::close);
        }
    }
}
