package io.lockstep.jdbc;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.LocalServerFaults;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.MariaDbServer;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/**
 * The kit against session mode on a real MariaDB the test starts, through a TCP proxy, with the faults
 * the kit can inject there (pause, kill and restart the server, partition, latency, lost replies).
 */
@DisplayName("jdbc session mode passes the compatibility kit on MariaDB, faults included")
class MariaDbSessionCompatibilityTest extends LockProviderCompatibilityKit {

    private static MariaDbServer mariadb;
    private static TcpProxy proxy;

    @BeforeAll
    static void start() {
        mariadb = MariaDbServer.start();
        proxy = TcpProxy.start(mariadb.host(), mariadb.port());
    }

    @AfterAll
    static void stop() {
        if (proxy != null) {
            proxy.close();
        }
        if (mariadb != null) {
            mariadb.close();
        }
    }

    private static String uri(String host, int port) {
        return "jdbc:mariadb://" + host + ":" + port + "/mysql?user=" + MariaDbServer.USER
                + "&mode=session&createSchema=true&callTimeout=1s&sessionTimeout=2s";
    }

    @Override
    protected LockProvider newProvider() {
        return Locks.open(uri(proxy.host(), proxy.port()));
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(Locks.open(uri("127.0.0.1", LocalServer.freePort())));
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of(uri(mariadb.host(), mariadb.port()));
    }

    @Override
    protected boolean survivesServerRestart() {
        return true; // the rows and the fence sequence are on disk
    }

    @Override
    protected BackendFaults faults() {
        return LocalServerFaults.of(mariadb, proxy);
    }
}
