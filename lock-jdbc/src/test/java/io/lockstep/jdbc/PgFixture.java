package io.lockstep.jdbc;

import io.lockstep.tck.servers.PostgresServer;

/** One PostgreSQL per test JVM, started on first use and stopped when the JVM exits. */
final class PgFixture {

    private static PostgresServer server;

    private PgFixture() {}

    static synchronized PostgresServer server() {
        if (server == null || !server.isRunning()) {
            PostgresServer s = PostgresServer.start();
            Runtime.getRuntime().addShutdownHook(new Thread(s::close, "stop-postgres"));
            server = s;
        }
        return server;
    }

    /** A lock URI for {@code host:port} of the server (or a proxy in front of it). */
    static String uri(String host, int port, String mode, String extra) {
        return "jdbc:postgresql://" + host + ":" + port + "/postgres?user=" + PostgresServer.USER + "&mode=" + mode
                + "&createSchema=true&callTimeout=1s" + extra;
    }
}
