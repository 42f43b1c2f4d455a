package io.lockstep.tck.resp;

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

/**
 * The kit's fault scenarios on a real server: a redis-server the kit starts, reached through a TCP
 * proxy, driven by {@link LocalServerFaults}, with holders in child JVMs; the provider is a raw-RESP
 * test fixture, so lock-tck needs no backend client.
 */
@DisplayName("the kit's fault scenarios on a real redis-server, through a proxy and child JVMs")
class RespCompatibilityTest extends LockProviderCompatibilityKit {

    private static RedisServer redis;
    private static TcpProxy proxy;

    @BeforeAll
    static void startServer() {
        redis = RedisServer.start();
        proxy = TcpProxy.start(redis.host(), redis.port());
    }

    @AfterAll
    static void stopServer() {
        proxy.close();
        redis.close();
    }

    private static String uri() {
        return "resp://127.0.0.1:" + proxy.port() + "?timeout=500ms";
    }

    @Override
    protected LockProvider newProvider() {
        return Locks.open(uri());
    }

    @Override
    protected BackendFaults faults() {
        return LocalServerFaults.of(redis, proxy);
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of(uri());
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(Locks.open("resp://127.0.0.1:" + LocalServer.freePort() + "?timeout=200ms"));
    }
}
