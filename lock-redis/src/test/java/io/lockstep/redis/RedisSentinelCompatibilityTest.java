package io.lockstep.redis;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.RedisSentinelSetup;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("lock-redis passes the compatibility kit on a Sentinel setup (1 primary, 2 replicas, 3 sentinels)")
class RedisSentinelCompatibilityTest extends LockProviderCompatibilityKit {

    private static RedisSentinelSetup redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisSentinelSetup.start();
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected LockProvider newProvider() {
        return Locks.open(redis.uri() + "?timeout=500ms");
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        // No sentinel answers: the factory fails closed at once (Jedis asks the sentinels eagerly).
        return Optional.of(Locks.open("redis-sentinel://127.0.0.1:" + LocalServer.freePort() + "/"
                + RedisSentinelSetup.MASTER_NAME + "?timeout=500ms"));
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of(redis.uri() + "?timeout=500ms");
    }

    /**
     * The clock group runs in {@link RedisCompatibilityTest}: the same scripts run on the primary, whose
     * clock counts the key's TTL, and the client counts validity with the same {@code driftFactor}; Sentinel
     * adds failover, not another clock. A fast server clock cannot reach redis-server in either (jemalloc),
     * and the slow holder and offset contender drive the same client code.
     */
    @Override
    protected Optional<Class<? extends LockProviderCompatibilityKit>> clockGroupRunsIn() {
        return Optional.of(RedisCompatibilityTest.class);
    }
}
