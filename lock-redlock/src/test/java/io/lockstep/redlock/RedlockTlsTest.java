package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.RedisServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code redlock://...?ssl=true} checks the server's certificate as {@code rediss://} does. The JVM's
 * default trust is replaced by one that trusts both test certificates, as a company CA would be trusted,
 * so that only the host name check can refuse the server that presents another host's certificate.
 */
@DisplayName("redlock:// with ssl=true")
class RedlockTlsTest {

    private static final LeaseOptions OPTIONS = LeaseOptions.of(Duration.ofSeconds(30));
    private static RedisServer otherHost; // its certificate names only db.other.example
    private static RedisServer loopback; // its certificate names 127.0.0.1
    private static Path trustsBoth;
    private static Path trustsLoopbackOnly;
    private static SSLContext jvmDefault;

    @BeforeAll
    static void start() throws Exception {
        Path dir = Files.createTempDirectory("lockstep-redlock-tls");
        certificate(dir, "other", "/CN=db.other.example", "subjectAltName=DNS:db.other.example");
        certificate(dir, "loopback", "/CN=127.0.0.1", "subjectAltName=IP:127.0.0.1");
        trustsBoth = trustStore(dir, "both.p12", "other", "loopback");
        trustsLoopbackOnly = trustStore(dir, "loopback.p12", "loopback");
        jvmDefault = SSLContext.getDefault();
        SSLContext.setDefault(context(trustsBoth));
        otherHost = RedisServer.startTls(dir.resolve("other.pem"), dir.resolve("other.key"));
        loopback = RedisServer.startTls(dir.resolve("loopback.pem"), dir.resolve("loopback.key"));
    }

    @AfterAll
    static void stop() {
        if (jvmDefault != null) {
            SSLContext.setDefault(jvmDefault);
        }
        if (otherHost != null) {
            otherHost.close();
        }
        if (loopback != null) {
            loopback.close();
        }
    }

    /**
     * Deadlines of 10 s: the node timeout would otherwise be a tenth of the 30 s lease, what these tests check
     * is the handshake's verdict, not a deadline, and a test JVM's first TLS connection on a busy machine took
     * over 2 s (lock-jdbc's PgTlsTest in a full run under two busy loops, 2026-11-27).
     */
    private static String uri(RedisServer server, String settings) {
        return "redlock://127.0.0.1:" + server.port()
                + "?ssl=true&quorum=1&connectTimeout=10s&socketTimeout=10s&nodeTimeout=10s" + settings;
    }

    @Test
    @DisplayName("a trusted certificate that names another host fails closed by default")
    void hostNameIsVerifiedByDefault() {
        try (LockProvider locks = Locks.open(uri(otherHost, ""))) {
            assertThatThrownBy(() -> locks.tryAcquire("tls/other", OPTIONS))
                    .isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("127.0.0.1:" + otherHost.port())
                    .satisfies(e -> assertThat(chain(e)).contains("subject alternative names"));
        }
    }

    @Test
    @DisplayName("verifyHostname=false accepts it, as on rediss://")
    void verificationCanBeTurnedOff() {
        try (LockProvider locks = Locks.open(uri(otherHost, "&verifyHostname=false"))) {
            assertThat(locks.tryAcquire("tls/off", OPTIONS)).isPresent();
        }
    }

    @Test
    @DisplayName("a certificate that names the host connected to is accepted")
    void matchingCertificateIsAccepted() {
        try (LockProvider locks = Locks.open(uri(loopback, ""))) {
            assertThat(locks.tryAcquire("tls/loopback", OPTIONS)).isPresent();
        }
    }

    @Test
    @DisplayName("trustStore replaces the JVM's trust: a server it does not hold fails closed")
    void trustStoreIsUsed() {
        String store = "&trustStore=" + trustsLoopbackOnly + "&trustStorePassword=changeit";
        try (LockProvider locks = Locks.open(uri(loopback, store))) {
            assertThat(locks.tryAcquire("tls/store", OPTIONS)).isPresent();
        }
        try (LockProvider locks = Locks.open(uri(otherHost, store + "&verifyHostname=false"))) {
            assertThatThrownBy(() -> locks.tryAcquire("tls/untrusted", OPTIONS))
                    .isInstanceOf(BackendUnavailableException.class);
        }
    }

    @Test
    @DisplayName("TLS settings without ssl=true, or a trust store that cannot be read, are configuration errors")
    void badTlsSettings() {
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?trustStore=" + trustsBoth))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("trustStore needs TLS (ssl=true)");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?verifyHostname=false"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("verifyHostname");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?ssl=true&trustStore=/no/such/file.p12"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("/no/such/file.p12");
        assertThatThrownBy(() -> Locks.open(
                        "redlock://h1,h2,h3?ssl=true&trustStore=" + trustsBoth + "&trustStorePassword=wrong-s3cret"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("trustStore")
                .satisfies(e -> assertThat(chain(e)).doesNotContain("wrong-s3cret"));
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?ssl=true&verifyHostname=perhaps"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("verifyHostname must be true or false, was 'perhaps'");
    }

    private static String chain(Throwable e) {
        List<String> out = new ArrayList<>();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            out.add(t.toString());
        }
        return String.join(" | ", out);
    }

    private static void certificate(Path dir, String name, String subject, String altNames)
            throws IOException, InterruptedException {
        run(
                dir,
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                name + ".key",
                "-out",
                name + ".pem",
                "-days",
                "1",
                "-subj",
                subject,
                "-addext",
                altNames);
    }

    private static Path trustStore(Path dir, String file, String... names) throws IOException, InterruptedException {
        for (String name : names) {
            run(
                    dir,
                    "keytool",
                    "-importcert",
                    "-noprompt",
                    "-alias",
                    name,
                    "-file",
                    name + ".pem",
                    "-keystore",
                    file,
                    "-storetype",
                    "PKCS12",
                    "-storepass",
                    "changeit");
        }
        return dir.resolve(file);
    }

    private static SSLContext context(Path store) throws Exception {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, "changeit".toCharArray());
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(keys);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }

    private static void run(Path dir, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        String output = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", List.of(command)) + " failed: " + output);
        }
    }
}
