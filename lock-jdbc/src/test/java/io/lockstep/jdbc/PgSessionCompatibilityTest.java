package io.lockstep.jdbc;

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
 * The kit against session mode on a real PostgreSQL the test starts, through a TCP proxy, with every
 * fault the kit can inject there, and session expiry: the holder's database session ended with {@code
 * pg_terminate_backend}.
 */
@DisplayName("jdbc session mode passes the compatibility kit on PostgreSQL, faults included")
class PgSessionCompatibilityTest extends LockProviderCompatibilityKit {

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
        return Locks.open(PgFixture.uri(proxy.host(), proxy.port(), "session", "&sessionTimeout=1500ms"));
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(Locks.open(PgFixture.uri("127.0.0.1", LocalServer.freePort(), "session", "")));
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of(PgFixture.uri(postgres.host(), postgres.port(), "session", ""));
    }

    @Override
    protected boolean survivesServerRestart() {
        return true; // the fence sequence is on disk
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
                terminateHolder(postgres, lease);
            }
        };
    }

    /** Ends the database session holding {@code lease}'s row lock; it names itself by its fence. */
    static void terminateHolder(PostgresServer postgres, Lease lease) {
        try (Connection admin = DriverManager.getConnection(postgres.jdbcUrl());
                PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        + " WHERE application_name = 'lockstep fence ' || ?")) {
            ps.setLong(1, lease.fencingToken().orElseThrow());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || !rs.getBoolean(1)) {
                    throw new AssertionError("no session holds '" + lease.name() + "'");
                }
            }
        } catch (SQLException e) {
            throw new AssertionError("could not end the holder's session", e);
        }
    }
}
