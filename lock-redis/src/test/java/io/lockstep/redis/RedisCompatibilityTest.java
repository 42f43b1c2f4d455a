package io.lockstep.redis;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.LocalServerFaults;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.RedisServer;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("lock-redis passes the compatibility kit on a real redis-server, faults included")
class RedisCompatibilityTest extends LockProviderCompatibilityKit {

    private static RedisServer redis;
    private static TcpProxy proxy;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
        proxy = TcpProxy.start(redis.host(), redis.port());
    }

    @AfterAll
    static void stopRedis() {
        if (proxy != null) {
            proxy.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected LockProvider newProvider() {
        // Through the proxy, so the kit can partition clients from the server. A second of socket timeout:
        // the kit's latency fault makes every round trip 200 ms, and a 250 ms timeout failed an acquire
        // under it on a busy machine. A paused server is still noticed in time: lost() comes from the
        // lease's own deadline, and failing closed is bounded by the kit at far more than 8 timeouts.
        return Locks.open("redis://" + proxy.host() + ":" + proxy.port() + "?timeout=1s");
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(Locks.open("redis://127.0.0.1:" + LocalServer.freePort() + "?timeout=500ms"));
    }

    @Override
    protected BackendFaults faults() {
        return LocalServerFaults.of(redis, proxy);
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of(redis.uri() + "?timeout=1s");
    }
}
