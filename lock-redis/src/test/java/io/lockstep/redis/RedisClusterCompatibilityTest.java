package io.lockstep.redis;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.RedisClusterSetup;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("lock-redis passes the compatibility kit on a Redis Cluster (3 primaries, 3 replicas) with waitReplicas=1")
class RedisClusterCompatibilityTest extends LockProviderCompatibilityKit {

    private static RedisClusterSetup cluster;

    @BeforeAll
    static void startCluster() {
        cluster = RedisClusterSetup.start();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    protected LockProvider newProvider() {
        // waitReplicas=1: every grant and extend also goes through the pipelined WAIT on the key's node.
        // WAIT gets seconds, as in FailoverProcedure: a replica in sync answers at once, but a 200 ms WAIT
        // once ran out on a loaded 2-core machine and failed an in-sync grant closed (right for the
        // product, not what this kit run is about).
        return Locks.open(cluster.uri() + "?timeout=3s&waitReplicas=1&waitTimeout=2s");
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(Locks.open("redis-cluster://127.0.0.1:" + LocalServer.freePort() + "?timeout=500ms"));
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of(cluster.uri() + "?timeout=500ms");
    }

    /**
     * The clock group runs in {@link RedisCompatibilityTest}: each key lives on one primary whose clock
     * counts its TTL, with the same scripts and the same {@code driftFactor} as on one server; the WAIT for a
     * replica adds latency to a grant, which the validity already counts from the request. A fast server
     * clock cannot reach redis-server in either (jemalloc).
     */
    @Override
    protected Optional<Class<? extends LockProviderCompatibilityKit>> clockGroupRunsIn() {
        return Optional.of(RedisCompatibilityTest.class);
    }
}
