package io.lockstep.jdbc;

import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.MariaDbServer;
import io.lockstep.tck.servers.PostgresServer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One PostgreSQL and one MariaDB for the whole test JVM, each with a TCP proxy in front for the kit's
 * partitions, started on first use (the test classes of one database run one after another on one
 * thread: they hold the resource lock named {@link #POSTGRES} or {@link #MARIADB}, because the kit kills
 * and pauses the server; classes of different databases run at the same time, see
 * {@code junit-platform.properties}). Stopped when the JVM exits.
 */
final class SharedServers {

    /** The resource lock of every test class that uses {@link #postgres()}. */
    static final String POSTGRES = "lock-jdbc shared PostgreSQL";

    /** The resource lock of every test class that uses {@link #mariadb()}. */
    static final String MARIADB = "lock-jdbc shared MariaDB";

    private static final Shared<PostgresServer> PG = new Shared<>(PostgresServer::start);
    private static final Shared<MariaDbServer> MARIA = new Shared<>(MariaDbServer::start);

    private SharedServers() {}

    static PostgresServer postgres() {
        return PG.server();
    }

    static TcpProxy postgresProxy() {
        return PG.proxy();
    }

    static MariaDbServer mariadb() {
        return MARIA.server();
    }

    static TcpProxy mariadbProxy() {
        return MARIA.proxy();
    }

    /** A PostgreSQL lock URI for {@code host:port} (the server or its proxy), superuser, schema created. */
    static String pgUri(String host, int port, String mode, String extra) {
        return "jdbc:postgresql://" + host + ":" + port + "/postgres?user=" + PostgresServer.USER + "&mode=" + mode
                + "&createSchema=true&callTimeout=1s" + extra;
    }

    /**
     * A MariaDB lock URI for {@code host:port} (the server or its proxy), superuser, schema created. Its call
     * timeout is 2 s, as H2's: the provider's one-time check at open reads {@code information_schema}, which
     * took over 1 s on a loaded machine.
     */
    static String mariaDbUri(String host, int port, String mode, String extra) {
        return "jdbc:mariadb://" + host + ":" + port + "/mysql?user=" + MariaDbServer.USER + "&mode=" + mode
                + "&createSchema=true&callTimeout=2s" + extra;
    }

    /** A server started once (a test that kills it restarts it itself) and its proxy. */
    private static final class Shared<S extends LocalServer> {
        private final Supplier<S> starter;
        private @Nullable S server;
        private @Nullable TcpProxy proxy;

        Shared(Supplier<S> starter) {
            this.starter = starter;
        }

        synchronized S server() {
            if (server == null) {
                S s = starter.get();
                Runtime.getRuntime()
                        .addShutdownHook(
                                new Thread(s::close, "stop-" + s.getClass().getSimpleName()));
                server = s;
            } else if (!server.isRunning()) {
                server.restart(); // a test that killed it failed before restarting it
            }
            return server;
        }

        synchronized TcpProxy proxy() {
            S s = server();
            if (proxy == null) {
                TcpProxy p = TcpProxy.start(s.host(), s.port());
                Runtime.getRuntime().addShutdownHook(new Thread(p::close, "stop-proxy"));
                proxy = p;
            }
            return proxy;
        }
    }
}
