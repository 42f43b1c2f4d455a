package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.RedisServer;
import io.lockstep.tck.servers.RedisTls;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("rediss:// (TLS)")
class RedisTlsTest {

    private static RedisServer redis;
    private static Path trustStore;

    @BeforeAll
    static void start() throws Exception {
        // A self-signed certificate for 127.0.0.1, and a trust store that holds it (lock-tck's launcher).
        RedisTls tls = RedisTls.selfSigned();
        trustStore = tls.trustStore();
        redis = RedisServer.startTls(tls.certificate(), tls.key());
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    @DisplayName("locks work over TLS with a trust store that holds the server's certificate")
    void tlsWithTrustStore() {
        // 10 s per call: the verdict is the subject, not a deadline; a test JVM's first TLS connection on a
        // busy machine took over 2 s (lock-jdbc's PgTlsTest in a full run under two busy loops)
        String uri = redis.uri() + "?timeout=10s&trustStore=" + trustStore + "&trustStorePassword=changeit";
        try (LockProvider locks = Locks.open(uri)) {
            assertThat(locks.tryAcquire("tls", LeaseOptions.of(Duration.ofSeconds(5))))
                    .isPresent();
        }
    }

    @Test
    @DisplayName("an untrusted server certificate fails closed, naming the server")
    void untrustedCertificateFailsClosed() {
        try (LockProvider locks = Locks.open(redis.uri() + "?timeout=1s")) {
            assertThatThrownBy(() -> locks.tryAcquire("tls", LeaseOptions.of(Duration.ofSeconds(5))))
                    .isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("127.0.0.1:" + redis.port());
        }
    }

    @Test
    @DisplayName("the certificate must name the host connected to, unless verifyHostname=false")
    void hostnameIsVerified() {
        String base = "rediss://localhost:" + redis.port() + "?timeout=1s&trustStore=" + trustStore
                + "&trustStorePassword=changeit";
        try (LockProvider locks = Locks.open(base)) {
            assertThatThrownBy(() -> locks.tryAcquire("tls", LeaseOptions.of(Duration.ofSeconds(5))))
                    .isInstanceOf(BackendUnavailableException.class);
        }
        try (LockProvider locks = Locks.open(base.replace("timeout=1s", "timeout=10s") + "&verifyHostname=false")) {
            assertThat(locks.tryAcquire("tls-2", LeaseOptions.of(Duration.ofSeconds(5))))
                    .isPresent();
        }
    }

    @Test
    @DisplayName("TLS settings on a plain redis:// URI, or an unreadable trust store, are configuration errors")
    void badTlsSettings() {
        assertThatThrownBy(() -> Locks.open("redis://127.0.0.1:1?trustStore=/x.p12"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("rediss://");
        assertThatThrownBy(() -> Locks.open("rediss://127.0.0.1:1?trustStore=/no/such/file.p12"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("/no/such/file.p12");
    }
}
