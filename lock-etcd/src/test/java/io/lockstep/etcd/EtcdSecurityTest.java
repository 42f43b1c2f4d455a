package io.lockstep.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.EtcdServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("lock-etcd: credentials, TLS and lease-time rules on real etcd servers")
class EtcdSecurityTest {

    private static final LeaseOptions LEASE = LeaseOptions.of(Duration.ofSeconds(5));

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @Test
    @DisplayName(
            "with auth on, the right user and password lock; a wrong password fails closed naming the endpoint, never the password")
    void credentials() throws Exception {
        try (EtcdServer etcd = EtcdServer.start()) {
            try (Client admin = Client.builder().endpoints(etcd.endpoint()).build()) {
                admin.getAuthClient().userAdd(bytes("root"), bytes("r00t-pw")).get(10, TimeUnit.SECONDS);
                admin.getAuthClient()
                        .userGrantRole(bytes("root"), bytes("root"))
                        .get(10, TimeUnit.SECONDS);
                admin.getAuthClient().authEnable().get(10, TimeUnit.SECONDS);
            }
            String where = "127.0.0.1:" + etcd.port();
            try (LockProvider good = Locks.open("etcd://root:r00t-pw@" + where + "?timeout=2s")) {
                Optional<Lease> lease = good.tryAcquire("secured", LEASE);
                assertThat(lease).isPresent();
                lease.get().release();
            }
            try (LockProvider fromConfig = Locks.open(LockConfig.of("etcd://" + where + "?timeout=2s")
                    .withProperty("user", "root")
                    .withProperty("password", "r00t-pw"))) {
                assertThat(fromConfig.tryAcquire("secured", LEASE)).isPresent();
            }
            try (LockProvider bad = Locks.open("etcd://root:wr0ng-pw@" + where + "?timeout=2s")) {
                assertThatThrownBy(() -> bad.tryAcquire("secured", LEASE))
                        .isInstanceOf(BackendUnavailableException.class)
                        .hasMessageContaining(where)
                        .hasMessageContaining("credentials")
                        .hasMessageNotContaining("wr0ng-pw");
            }
            try (LockProvider anonymous = Locks.open("etcd://" + where + "?timeout=2s")) {
                assertThatThrownBy(() -> anonymous.tryAcquire("secured", LEASE))
                        .isInstanceOf(BackendUnavailableException.class)
                        .hasMessageContaining(where);
            }
        }
    }

    @Test
    @DisplayName(
            "etcds with a trust store holding the server's certificate locks; without it, or in plain text, it fails naming the endpoint")
    void tls() throws Exception {
        Path dir = Files.createTempDirectory("lockstep-etcd-tls");
        run(
                dir,
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                "key.pem",
                "-out",
                "cert.pem",
                "-days",
                "1",
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1");
        run(
                dir,
                "keytool",
                "-importcert",
                "-noprompt",
                "-alias",
                "etcd",
                "-file",
                "cert.pem",
                "-keystore",
                "trust.p12",
                "-storetype",
                "PKCS12",
                "-storepass",
                "changeit");
        try (EtcdServer etcd = EtcdServer.startTls(dir.resolve("cert.pem"), dir.resolve("key.pem"))) {
            String where = "127.0.0.1:" + etcd.port();
            String trusted =
                    etcd.uri() + "?timeout=3s&trustStore=" + dir.resolve("trust.p12") + "&trustStorePassword=changeit";
            try (LockProvider locks = Locks.open(trusted)) {
                Optional<Lease> lease = Optional.empty();
                for (int i = 0; i < 20 && lease.isEmpty(); i++) { // the new member may still be electing itself
                    try {
                        lease = locks.tryAcquire("tls", LEASE);
                    } catch (BackendUnavailableException e) {
                        Thread.sleep(100);
                    }
                }
                assertThat(lease).isPresent();
            }
            try (LockProvider untrusted = Locks.open(etcd.uri() + "?timeout=2s")) {
                assertThatThrownBy(() -> untrusted.tryAcquire("tls", LEASE))
                        .isInstanceOf(BackendUnavailableException.class)
                        .hasMessageContaining(where);
            }
            try (LockProvider plain = Locks.open("etcd://" + where + "?timeout=2s")) {
                assertThatThrownBy(() -> plain.tryAcquire("tls", LEASE))
                        .isInstanceOf(BackendUnavailableException.class)
                        .hasMessageContaining(where);
            }
        }
    }

    @Test
    @DisplayName(
            "a lease time whose session TTL is below the server's minimum is rejected naming leaseTime, its value and the rule")
    void tooShortLeaseTimeIsRejected() {
        // An election timeout of 1 s makes etcd's smallest lease 2 s (1.5 x, rounded up).
        try (EtcdServer etcd = EtcdServer.startWith(List.of("--election-timeout", "1000"));
                LockProvider locks = Locks.open(etcd.uri() + "?timeout=2s")) {
            assertThatThrownBy(() -> locks.tryAcquire("short", LeaseOptions.of(Duration.ofMillis(600))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("leaseTime")
                    .hasMessageContaining("PT0.6S")
                    .hasMessageContaining("at least 2 s");
            Optional<Lease> ok = locks.tryAcquire("short", LeaseOptions.of(Duration.ofMillis(1_400)));
            assertThat(ok)
                    .as("1.4 s needs a 3 s session, which this server grants")
                    .isPresent();
            assertThat(ok.get().remaining()).isLessThanOrEqualTo(Duration.ofMillis(1_400));
        }
    }

    private static void run(Path dir, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
        }
    }
}
