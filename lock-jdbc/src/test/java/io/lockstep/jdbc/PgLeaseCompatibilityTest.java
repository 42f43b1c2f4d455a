package io.lockstep.jdbc;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.LocalServerFaults;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.PostgresServer;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/**
 * The kit against lease mode on a real PostgreSQL the test starts, through a TCP proxy, with every fault
 * the kit can inject there: pause, kill and restart the server, partition, latency, lost replies, a
 * holder JVM frozen or killed.
 */
@DisplayName("jdbc lease mode passes the compatibility kit on PostgreSQL, faults included")
class PgLeaseCompatibilityTest extends LockProviderCompatibilityKit {

    private static PostgresServer postgres;
    private static TcpProxy proxy;

    @BeforeAll
    static void start() {
        postgres = PgFixture.server();
        proxy = TcpProxy.start(postgres.host(), postgres.port());
    }

    @AfterAll
    static void stop() {
        if (proxy != null) {
            proxy.close();
        }
    }

    @Override
    protected LockProvider newProvider() {
        return Locks.open(PgFixture.uri(proxy.host(), proxy.port(), "lease", ""));
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(Locks.open(PgFixture.uri("127.0.0.1", LocalServer.freePort(), "lease", "")));
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of(PgFixture.uri(postgres.host(), postgres.port(), "lease", ""));
    }

    @Override
    protected boolean survivesServerRestart() {
        return true; // the rows and the fence sequence are on disk
    }

    @Override
    protected BackendFaults faults() {
        return LocalServerFaults.of(postgres, proxy);
    }
}
