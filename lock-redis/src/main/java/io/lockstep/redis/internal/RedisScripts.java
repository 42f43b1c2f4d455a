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
     * #RELEASE}, {@link #WITHDRAW}). KEYS[1] lock key, KEYS[2] fence counter, KEYS[3] the wait list (a list
     * of waiters in arrival order, each named by the SHA-1 of its owner token, hex). A waiter is alive while
     * its entry exists: a string key {@link RedisKeys#waiterKey} ({@code <lock key>:waiter:<hash>}) that
     * expires by itself (its waiter refreshes it), holding {@code <lane><lease ms> <value to store>}, where
     * {@code <lane>} is {@code 1} if the waiter said at its latest refresh that it blocks on its inbox, else
     * {@code 0}. A name on the list whose entry is gone is a dead waiter, or one that left or was granted.
     *
     * <p>{@code first_live(skip)} reads the first 100 names once and returns the position of the first live
     * one other than {@code skip}, its name and its entry (nil if none), and how many names it read; it
     * changes nothing. {@code take_entry(hash)} reads and deletes an entry in one {@code GETDEL} (a GET and
     * a DEL on a server before 6.2, which refuses GETDEL). {@code grant_next(channel, name, leaving)} pops
     * names off the list's head (at most 100) until one other than {@code leaving} has an entry, which it
     * takes: in the common case, a live first waiter, one {@code LPOP} and one {@code GETDEL}. It hands the
     * free lock to that waiter exactly as an acquire would (SET PX with the waiter's lease time over the
     * released value, INCR the fence), puts the fence in the waiter's inbox ({@link RedisKeys#inboxKey}, a
     * list that lives {@link #INBOX_TTL}, where a waiter blocked on it takes it at once: {@link GrantLane})
     * and, unless the waiter blocks on that inbox and the push succeeded, announces the grant as {@code
     * <name> US <hash> US <fence>} (US is the control character 31, which no lock name contains): a notice
     * is read by every subscribed client, and its one reader that cares would take the grant from its
     * inbox anyway. False if nobody live waits (nothing changed but dead names popped).
     *
     * <p>Entries and inboxes are named in no KEYS: the script picks the waiter, and both are built from the
     * lock's key, so they share its hash slot. While a cluster slot migrates, a key the node lacks is "not
     * local" to a script, so entries are read and written with {@code pcall} (an entry that cannot be read
     * counts as dead: its waiter queues again at its next refresh; one that cannot be written is not
     * queued this time) and so are the inbox and the notice (the waiter loses the fast delivery, never the
     * release). For the same reason no script touches a key again after a command that may have deleted it
     * (a {@code DEL}, an {@code LTRIM} or {@code LREM} that empties the list): it would be "not local"
     * halfway through, after writes that are not rolled back; {@code grant_next}'s pops, the one exception,
     * are {@code pcall}s, and a refused pop ends the search as an empty list does.
     */
    private static final String QUEUE_FUNCTIONS =
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
              redis.pcall('PEXPIRE', inbox, INBOX_TTL_MS)
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
            """
                    .replace("INBOX_TTL_MS", Long.toString(INBOX_TTL.toMillis()));

    /**
     * KEYS as in {@link #QUEUE_FUNCTIONS}; ARGV[1] the value to store (owner token, a space, the holder),
     * ARGV[2] lease time in ms, ARGV[3] the queue entry's time to live in ms ({@code 0}: do not queue),
     * ARGV[4] the SHA-1 of the owner token, hex (empty when not queuing), ARGV[5] the release channel,
     * ARGV[6] the lock name, ARGV[7] {@code 1} if the waiter will block on its inbox until its next refresh
     * ({@link GrantLane}), so that a grant to it needs no notice (anything else: it waits for notices).
     *
     * <p>Free and nobody queued (the uncontended path: one {@code LRANGE} of an absent list more than a
     * bare acquire): SET value PX ttl and INCR the fence, return {1, fence}. Free with a queue: granted
     * only to the first live waiter; if that is someone else, the lock is handed to them as a release
     * would (after this waiter joined the list, so the hand-over's pops never empty it), so an acquire
     * without a queue entry never jumps the queue. Already ours (granted by a release, or a retried
     * attempt whose reply was lost): refresh the TTL and return the same fence, which no one else can have
     * incremented while we held the lock. Otherwise, with ARGV[3] > 0, create our entry (it lives ARGV[3]
     * ms) and join the list's tail, or, if the entry exists, write it again and make sure our name is on
     * the list ({@code LPOS}; a server before 6.0.6 refuses it and is taken at its word that it is): a
     * refresh costs a second {@code SET} and the {@code LPOS}, where a waiter joining for the first time,
     * the common case in a handoff, pays one {@code SET} and the {@code RPUSH}; return {0, the holder's
     * remaining ms, the fence counter now}: a grant whose fence is above that counter happened after this
     * call. Every entry lives the same time (the backend's constant), so the list's own expiry is simply
     * set to it. (A free lock's key is absent, so in a migrating cluster slot the free branch never runs:
     * the script is answered TRYAGAIN.) The free branch reads at most 100 names: behind 100 dead ones it
     * takes the lock as if nobody live waited.
     */
    static final LuaScript ACQUIRE = new LuaScript(
            QUEUE_FUNCTIONS
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
     * channel, ARGV[3] lock name, ARGV[4] the SHA-1 of the owner token, hex. Deletes the token's entry and,
     * if a release granted the lock to it meanwhile (its value is the token, a space and a holder, or the
     * token alone), releases that grant and hands it on, all in one script, so a waiter that gives up never
     * keeps a lock it did not take; otherwise takes its name off the list. 1 if a grant was released, 0 if
     * not.
     */
    static final LuaScript WITHDRAW = new LuaScript(
            QUEUE_FUNCTIONS
                    + """
            redis.pcall('DEL', entry_key(ARGV[4]))
            local value = redis.call('GET', KEYS[1])
            if value and (value == ARGV[1] or string.sub(value, 1, #ARGV[1] + 1) == ARGV[1] .. ' ') then
              if not grant_next(ARGV[2], ARGV[3], ARGV[4]) then
                redis.call('DEL', KEYS[1])
                redis.pcall('PUBLISH', ARGV[2], ARGV[3])
              end
              return 1
            end
            redis.call('LREM', KEYS[3], 0, ARGV[4])
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
