package com.example.pgadvisory;

import io.lockstep.Lease;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.LocalServerFaults;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/**
 * The kit against the advisory-lock provider on a real PostgreSQL the kit starts, with every fault it
 * can inject: pause, kill and restart the server; partition, latency and lost replies through a proxy;
 * and session expiry, which ends the holder's database session with {@code pg_terminate_backend}.
 */
@DisplayName("pgadvisory passes the compatibility kit on a real PostgreSQL, faults included")
class AdvisoryProviderCompatibilityTest extends LockProviderCompatibilityKit {

    private static PostgresServer postgres;
    private static TcpProxy proxy;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.start();
        proxy = TcpProxy.start(postgres.host(), postgres.port());
    }

    @AfterAll
    static void stopPostgres() {
        if (proxy != null) {
            proxy.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    protected LockProvider newProvider() {
        // Through the proxy, so the kit can partition, delay and lose replies. Calls get 3 s: this provider
        // opens a connection per lease, and on a machine whose cores are taken a new PostgreSQL backend
        // plus its first statement took longer than 1 s ("Read timed out" with nothing faulted).
        return Locks.open("pgadvisory://" + proxy.host() + ":" + proxy.port() + "/postgres?callTimeout=3s&sslmode=disable");
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(Locks.open("pgadvisory://127.0.0.1:" + LocalServer.freePort() + "/postgres?callTimeout=1s&sslmode=disable"));
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of("pgadvisory://" + postgres.host() + ":" + postgres.port() + "/postgres?callTimeout=3s&sslmode=disable");
    }

    @Override
    protected boolean survivesServerRestart() {
        return true; // the fence sequence and the lease rows are on disk
    }

    @Override
    protected BackendFaults faults() {
        return new LocalServerFaults(postgres, proxy) {
            @Override
            public Set<Fault> supported() {
                Set<Fault> all = EnumSet.copyOf(super.supported());
                all.add(Fault.EXPIRE_SESSION);
                return all;
            }

            @Override
            public void expireSession(LockProvider provider, Lease lease) {
                // The lease row names the session that holds the advisory lock; end it from outside.
                try (Connection admin = DriverManager.getConnection(postgres.jdbcUrl());
                        PreparedStatement ps = admin.prepareStatement(
                                "SELECT pg_terminate_backend(holder_pid) FROM lockstep_lease WHERE name = ?")) {
                    ps.setString(1, lease.name());
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next() || !rs.getBoolean(1)) {
                            throw new AssertionError("no session holds '" + lease.name() + "'");
                        }
                    }
                } catch (SQLException e) {
                    throw new AssertionError("could not end the holder's session", e);
                }
            }
        };
    }
}
