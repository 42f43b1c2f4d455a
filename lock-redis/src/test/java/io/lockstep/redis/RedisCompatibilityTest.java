package io.lockstep.redis;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.RedisServer;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("lock-redis passes the compatibility kit on a real redis-server")
class RedisCompatibilityTest extends LockProviderCompatibilityKit {

    private static RedisServer redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @Override
    protected LockProvider newProvider() {
        return Locks.open(redis.uri());
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(Locks.open("redis://127.0.0.1:" + LocalServer.freePort() + "?timeout=500ms"));
    }
}
