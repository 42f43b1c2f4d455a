package io.lockstep.bench;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.redis.RedisLockProvider;
import io.lockstep.redlock.RedlockLockProvider;
import io.lockstep.redlock.RedlockOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;

/**
 * The contenders by benchmark name, how many servers each needs, and what each must be seen to do
 * on every server per operation:
 *
 * <ul>
 *   <li>{@code redis}: lock-redis on one node; {@code floor-redis}: raw Jedis running lock-redis's
 *       two scripts;
 *   <li>{@code redlock-N}: lock-redlock over N nodes; {@code floor-redlock-N}: raw Jedis running
 *       lock-redlock's two scripts on N nodes, fanned out from one thread;
 *   <li>{@code jedis-setnx}: the hand-written {@code SET NX PX} lock, unfenced, for reference;
 *   <li>peers ({@link Peers}): {@code redisson-rlock}, {@code redisson-fenced}, {@code shedlock-redis} beside
 *       {@code redis}; {@code redisson-redlock-N} beside {@code redlock-N}, on the same N nodes.
 * </ul>
 */
final class Contenders {

    /** lock-redis's acquire + release on its one node: two scripts, and what runs inside them. */
    static final Map<String, Double> REDIS_MIX = Map.of(
            "evalsha", 2.0, "get", 2.0, "lrange", 1.0, "lpop", 1.0, "set", 1.0, "incr", 1.0, "del", 1.0, "publish",
            1.0);

    /** lock-redlock's acquire + release on each node: two scripts, and what runs inside them. */
    static final Map<String, Double> REDLOCK_MIX =
            Map.of("evalsha", 2.0, "time", 1.0, "get", 3.0, "set", 2.0, "del", 1.0, "publish", 1.0);

    /** {@code SET NX PX}, then compare-and-delete. */
    static final Map<String, Double> SETNX_MIX = Map.of("set", 1.0, "evalsha", 1.0, "get", 1.0, "del", 1.0);

    /**
     * Redisson 3.52's RLock, as its servers saw it: its lock and unlock scripts by EVALSHA, a hash per
     * lock ({@code HINCRBY}, {@code HEXISTS}), an unlock latch ({@code GET}, {@code SET}, {@code DEL}) and
     * a release notice.
     */
    static final Map<String, Double> REDISSON_RLOCK_MIX = Map.of(
            "evalsha", 2.0,
            "del", 2.0,
            "exists", 1.0,
            "get", 1.0,
            "hexists", 1.0,
            "hincrby", 2.0,
            "pexpire", 1.0,
            "publish", 1.0,
            "set", 1.0);

    /** Redisson 3.52's RFencedLock, as seen: RLock's mix and an {@code INCR} of its token counter. */
    static final Map<String, Double> REDISSON_FENCED_MIX = Map.ofEntries(
            Map.entry("evalsha", 2.0),
            Map.entry("del", 2.0),
            Map.entry("exists", 1.0),
            Map.entry("get", 1.0),
            Map.entry("hexists", 1.0),
            Map.entry("hincrby", 2.0),
            Map.entry("incr", 1.0),
            Map.entry("pexpire", 1.0),
            Map.entry("publish", 1.0),
            Map.entry("set", 1.0));

    /**
     * Redisson 3.52's RedissonRedLock, as each of its nodes saw it: RLock's mix, and a third {@code EVALSHA}
     * ({@code PEXPIRE}) that sets every node's lease again once the quorum is held. Its acquire goes to the
     * nodes one after another; its release goes to all at once.
     */
    static final Map<String, Double> REDISSON_REDLOCK_MIX = Map.of(
            "evalsha", 3.0,
            "del", 2.0,
            "exists", 1.0,
            "get", 1.0,
            "hexists", 1.0,
            "hincrby", 2.0,
            "pexpire", 2.0,
            "publish", 1.0,
            "set", 1.0);

    /**
     * ShedLock 6.10's Redis provider (Spring Data Redis, default {@code safeUpdate} off), as seen: {@code SET NX
     * PX} to lock, a plain {@code DEL} to unlock.
     */
    static final Map<String, Double> SHEDLOCK_REDIS_MIX = Map.of("set", 1.0, "del", 1.0);

    private Contenders() {}

    /** What a benchmark must be seen to do on every server per operation, and the scripts every server must have run. */
    record Expectation(Map<String, Double> perNode, List<String> scripts) {}

    /** The number of servers {@code backend} runs on: the number after its last dash, else one. */
    static int nodes(String backend) {
        return backend.matches("(redlock|floor-redlock|redisson-redlock)-\\d+")
                ? Integer.parseInt(backend.substring(backend.lastIndexOf('-') + 1))
                : 1;
    }

    /** The contender named {@code backend}, its clients connected to {@code addresses}. */
    static Contender open(String backend, List<HostAndPort> addresses) {
        if (backend.equals("jedis-setnx")) {
            return new RawFloors.SetNx(addresses.get(0));
        }
        if (backend.equals("floor-redis")) {
            return new RawFloors.Redis(addresses.get(0));
        }
        if (backend.startsWith("floor-redlock-")) {
            return new RawFloors.Redlock(addresses);
        }
        if (backend.equals("redisson-rlock")) {
            return new Peers.RedissonRLock(addresses.get(0));
        }
        if (backend.equals("redisson-fenced")) {
            return new Peers.RedissonFenced(addresses.get(0));
        }
        if (backend.startsWith("redisson-redlock-")) {
            return new Peers.RedissonRedLock(addresses);
        }
        if (backend.equals("shedlock-redis")) {
            return new Peers.ShedLockRedis(addresses.get(0));
        }
        if (backend.equals("redis")) {
            return new Lockstep(RedisLockProvider.builder(new JedisPooled(addresses.get(0)))
                    .closeClient(true)
                    .build());
        }
        if (backend.startsWith("redlock-")) {
            return new Lockstep(RedlockLockProvider.connect(
                    addresses,
                    DefaultJedisClientConfig.builder().build(),
                    RedlockOptions.defaults(),
                    LockRuntime.defaults()));
        }
        throw new IllegalArgumentException("unknown backend '" + backend + "'");
    }

    /** What {@code backend} must be seen to do. */
    static Expectation expectation(String backend) {
        if (backend.equals("redisson-rlock")) {
            return new Expectation(REDISSON_RLOCK_MIX, List.of());
        }
        if (backend.equals("redisson-fenced")) {
            return new Expectation(REDISSON_FENCED_MIX, List.of());
        }
        if (backend.startsWith("redisson-redlock-")) {
            return new Expectation(REDISSON_REDLOCK_MIX, List.of());
        }
        if (backend.equals("shedlock-redis")) {
            return new Expectation(SHEDLOCK_REDIS_MIX, List.of());
        }
        if (backend.equals("jedis-setnx")) {
            return new Expectation(SETNX_MIX, List.of(RawFloors.sha1(RawFloors.COMPARE_AND_DELETE)));
        }
        if (backend.equals("redis") || backend.equals("floor-redis")) {
            return new Expectation(
                    REDIS_MIX,
                    List.of(RawFloors.sha1(RawFloors.REDIS_ACQUIRE), RawFloors.sha1(RawFloors.REDIS_RELEASE)));
        }
        if (backend.startsWith("redlock-") || backend.startsWith("floor-redlock-")) {
            return new Expectation(
                    REDLOCK_MIX,
                    List.of(RawFloors.sha1(RawFloors.REDLOCK_ACQUIRE), RawFloors.sha1(RawFloors.REDLOCK_RELEASE)));
        }
        throw new IllegalArgumentException("unknown backend '" + backend + "'");
    }

    /** A Lockstep provider: {@code tryAcquire} with no wait, then {@code release}. */
    static final class Lockstep implements Contender {
        private static final LeaseOptions OPTIONS = LeaseOptions.of(Duration.ofSeconds(30));
        private final LockProvider provider;

        Lockstep(LockProvider provider) {
            this.provider = provider;
        }

        @Override
        public void acquireRelease(Caller caller) {
            Lease lease = provider.tryAcquire(caller.name, OPTIONS)
                    .orElseThrow(() -> new IllegalStateException("lock '" + caller.name + "' was not free"));
            if (!lease.release()) {
                throw new IllegalStateException("release of '" + caller.name + "' freed nothing");
            }
        }

        @Override
        public void close() {
            provider.close();
        }
    }
}
