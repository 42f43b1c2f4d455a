package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.PostgresServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS settings in the URI go to the driver (issue 9 item 2): a PostgreSQL of its own with {@code ssl=on}
 * and a throwaway CA and server certificate for 127.0.0.1 made by {@code openssl} in a temporary
 * directory. {@code sslmode=verify-full} with the right CA connects over TLS; with another CA it fails
 * closed, naming TLS, never the password.
 */
class PgTlsTest {

    private static final String SECRET = "s3cr3t-Pa55";

    @TempDir
    static Path dir;

    private static PostgresServer pg;

    @BeforeAll
    static void start() throws Exception {
        makeCa("ca");
        makeCa("other-ca");
        openssl(
                "req",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=127.0.0.1");
        Files.writeString(dir.resolve("san.ext"), "subjectAltName=IP:127.0.0.1\n");
        openssl(
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "san.ext",
                "-out",
                "server.crt");
        pg = PostgresServer.startWithTls(dir.resolve("server.crt"), dir.resolve("server.key"));
    }

    @AfterAll
    static void stop() {
        if (pg != null) {
            pg.close();
        }
    }

    /**
     * The provider's URI trusting {@code ca}. Its call timeout is 10 s: this test's subject is TLS, not a
     * deadline, and the first connection of a test JVM on a busy machine (the driver loaded, the TLS stack
     * set up, a handshake) took over 2 s in a full run under two busy loops (R4, 2026-11-27).
     */
    private static String uri(String ca) {
        return "jdbc:postgresql://" + pg.host() + ":" + pg.port() + "/postgres?user=" + PostgresServer.USER
                + "&password=" + SECRET + "&ApplicationName=tlstest&createSchema=true&callTimeout=10s"
                + "&sslmode=verify-full&sslrootcert=" + dir.resolve(ca + ".crt");
    }

    @Test
    @DisplayName("sslmode=verify-full with the server's CA acquires and releases over TLS")
    void verifiedTlsAcquiresAndReleases() throws SQLException {
        try (LockProvider locks = Locks.open(uri("ca"))) {
            Lease lease = locks.tryAcquire("tls", LeaseOptions.of(Duration.ofSeconds(30)))
                    .orElseThrow();
            assertThat(tlsConnections())
                    .as("the provider's connections that use TLS")
                    .isPositive();
            assertThat(plainConnections())
                    .as("the provider's connections without TLS")
                    .isZero();
            assertThat(lease.release()).isTrue();
        }
    }

    @Test
    @DisplayName("a CA that did not sign the server's certificate fails closed, naming TLS, never the password")
    void wrongCaFailsClosed() {
        assertThatThrownBy(() -> Locks.open(uri("other-ca")).close())
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContainingAll("127.0.0.1:" + pg.port(), "SSL")
                .hasMessageNotContaining(SECRET);
    }

    private static long tlsConnections() throws SQLException {
        return count("SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)"
                + " WHERE s.ssl AND a.application_name = 'tlstest'");
    }

    private static long plainConnections() throws SQLException {
        return count("SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)"
                + " WHERE NOT s.ssl AND a.application_name = 'tlstest'");
    }

    private static long count(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl() + "&sslmode=disable");
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void makeCa(String name) throws IOException, InterruptedException {
        openssl(
                "req",
                "-x509",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                name + ".key",
                "-out",
                name + ".crt",
                "-days",
                "2",
                "-subj",
                "/CN=lockstep test " + name);
    }

    private static void openssl(String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("openssl.log").toFile())
                .start();
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException(
                    "openssl " + String.join(" ", args) + " failed: " + Files.readString(dir.resolve("openssl.log")));
        }
    }
}
