package io.lockstep.jdbc;

import io.lockstep.Lease;
import io.lockstep.LockProvider;
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

/**
 * The kit against one database server × mode, on the module's shared server ({@link SharedServers})
 * through its TCP proxy, with every fault the kit can inject there: pause, kill and restart the server,
 * partition, latency, lost replies, a holder JVM frozen or killed; on PostgreSQL in session mode also
 * session expiry ({@code pg_terminate_backend} of the holder). A subclass names the database and mode
 * and holds the database's resource lock, since the kit kills and pauses the shared server.
 */
abstract class ServerCompatibilityKit extends LockProviderCompatibilityKit {

    /** A database server the module's tests start. */
    enum Database {
        POSTGRES,
        MARIADB;

        LocalServer server() {
            return this == POSTGRES ? SharedServers.postgres() : SharedServers.mariadb();
        }

        TcpProxy proxy() {
            return this == POSTGRES ? SharedServers.postgresProxy() : SharedServers.mariadbProxy();
        }

        String uri(String host, int port, String mode, String extra) {
            return this == POSTGRES
                    ? SharedServers.pgUri(host, port, mode, extra)
                    : SharedServers.mariaDbUri(host, port, mode, extra);
        }
    }

    private final Database database;
    private final String mode;
    private final String extra;
    private final String childExtra;

    /**
     * @param extra further URI settings of the providers in this JVM, such as a session timeout short
     *     enough for the kit's waits
     * @param childExtra further URI settings of the holder in a child JVM
     */
    ServerCompatibilityKit(Database database, String mode, String extra, String childExtra) {
        this.database = database;
        this.mode = mode;
        this.extra = extra;
        this.childExtra = childExtra;
    }

    @Override
    protected LockProvider newProvider() {
        TcpProxy proxy = database.proxy();
        return KitRuntimes.open(this, database.uri(proxy.host(), proxy.port(), mode, extra));
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(KitRuntimes.open(this, database.uri("127.0.0.1", LocalServer.freePort(), mode, extra)));
    }

    @Override
    protected Optional<String> childJvmUri() {
        LocalServer server = database.server();
        return Optional.of(database.uri(server.host(), server.port(), mode, childExtra));
    }

    @Override
    protected boolean survivesServerRestart() {
        return true; // the rows and the fence sequence are on disk
    }

    @Override
    protected BackendFaults faults() {
        LocalServer server = database.server();
        if (database != Database.POSTGRES || !mode.equals("session")) {
            return LocalServerFaults.of(server, database.proxy());
        }
        PostgresServer postgres = (PostgresServer) server;
        return new LocalServerFaults(postgres, database.proxy()) {
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

    /** Ends the PostgreSQL session holding {@code lease}'s row lock; it names itself by its fence. */
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
