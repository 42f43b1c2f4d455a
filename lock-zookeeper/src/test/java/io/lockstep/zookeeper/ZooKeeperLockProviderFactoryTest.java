package io.lockstep.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.StrengthTier;
import io.lockstep.tck.Timing;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.ZooKeeperServer;
import java.time.Duration;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("zookeeper:// URIs: settings, credentials and bad input")
class ZooKeeperLockProviderFactoryTest {

    private static final Timing timing = Timing.fromSystemProperty();
    private static ZooKeeperServer zk;

    @BeforeAll
    static void start() {
        // A server that grants sessions of at most 20 s, so a longer request is negotiated down.
        zk = ZooKeeperServer.start(Duration.ofSeconds(20));
    }

    @AfterAll
    static void stop() {
        if (zk != null) {
            zk.close();
        }
    }

    private static String base() {
        return "zookeeper://" + zk.connectString();
    }

    @Test
    @DisplayName("a URI opens a CONSENSUS provider with fencing that takes and releases a lock")
    void opensAndLocks() {
        try (LockProvider locks = Locks.open(base() + "?sessionTimeout=10s&connectionTimeout=2s")) {
            assertThat(locks.info().name()).isEqualTo("zookeeper");
            assertThat(locks.info().tier()).isEqualTo(StrengthTier.CONSENSUS);
            Lease lease = locks.tryAcquire("factory-basic", LeaseOptions.of(Duration.ofSeconds(5)))
                    .orElseThrow();
            assertThat(lease.fencingToken()).isPresent();
            assertThat(lease.release()).isTrue();
        }
    }

    @Test
    @DisplayName("an unknown setting is refused, naming it and the known settings")
    void unknownSettingIsRefused() {
        assertThatThrownBy(() -> Locks.open(base() + "?sesionTimeout=5s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("sesionTimeout")
                .hasMessageContaining("sessionTimeout")
                .hasMessageContaining("connectionTimeout");
    }

    @Test
    @DisplayName("a session timeout the server negotiates down is refused, naming sessionTimeout and what was granted")
    void negotiatedDownSessionTimeoutIsRefused() {
        assertThatThrownBy(() -> Locks.open(base() + "?sessionTimeout=40s&connectionTimeout=2s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("sessionTimeout=PT40S")
                .hasMessageContaining("20000 ms");
    }

    @Test
    @DisplayName("a chroot that does not exist is refused, naming the chroot")
    void missingChrootIsRefused() {
        assertThatThrownBy(() -> Locks.open(base() + "/no-such-chroot?sessionTimeout=10s&connectionTimeout=2s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("chroot '/no-such-chroot' does not exist");
    }

    @Test
    @DisplayName("a chroot that exists is used: the lock nodes live under it")
    void existingChrootIsUsed() throws Exception {
        try (CuratorFramework admin = admin(null)) {
            admin.create().orSetData().forPath("/app-chroot");
            try (LockProvider locks = Locks.open(base() + "/app-chroot?sessionTimeout=10s&connectionTimeout=2s")) {
                Lease lease = locks.tryAcquire("in-chroot", LeaseOptions.of(Duration.ofSeconds(5)))
                        .orElseThrow();
                assertThat(admin.getChildren().forPath("/app-chroot/lockstep")).contains("in-chroot");
                lease.release();
            }
        }
    }

    @Test
    @DisplayName("a wrong digest password is refused before any lock is taken, naming the user but never the password")
    void wrongDigestIsRefused() {
        String path = "?sessionTimeout=10s&connectionTimeout=2s&basePath=/secured";
        try (LockProvider owner = Locks.open("zookeeper://alice:right-secret@" + zk.connectString() + path)) {
            owner.tryAcquire("secured", LeaseOptions.of(Duration.ofSeconds(5)))
                    .orElseThrow()
                    .release();
        }
        assertThatThrownBy(() -> Locks.open("zookeeper://alice:wrong-secret@" + zk.connectString() + path))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("user 'alice'")
                .hasMessageContaining("basePath /secured")
                .hasMessageNotContaining("wrong-secret")
                .hasMessageNotContaining("right-secret");
        assertThatThrownBy(() -> Locks.open(base() + path))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("no credentials");
        // The right credentials still work, and other settings may come from LockConfig properties.
        LockConfig config =
                LockConfig.of(base() + path).withProperty("user", "alice").withProperty("password", "right-secret");
        try (LockProvider again = Locks.open(config)) {
            assertThat(again.toString()).doesNotContain("right-secret");
            again.tryAcquire("secured", LeaseOptions.of(Duration.ofSeconds(5)))
                    .orElseThrow()
                    .release();
        }
    }

    @Test
    @DisplayName(
            "a password without a user (or a user without a password) is refused naming the rule, never the password, and creates nothing")
    void halfOfTheCredentialsIsRefused() throws Exception {
        String path = "?sessionTimeout=10s&connectionTimeout=2s&basePath=/half-credentials";
        assertThatThrownBy(() -> Locks.open(base() + path + "&password=s3cret-alone"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("needs both a user and a password")
                .hasMessageContaining("the password has no user")
                .hasMessageNotContaining("s3cret-alone");
        assertThatThrownBy(() -> Locks.open(LockConfig.of(base() + path).withProperty("password", "s3cret-alone")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("needs both a user and a password")
                .hasMessageNotContaining("s3cret-alone");
        assertThatThrownBy(() -> Locks.open("zookeeper://:s3cret-alone@" + zk.connectString() + path))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("the password has no user")
                .hasMessageNotContaining("s3cret-alone");
        assertThatThrownBy(() -> Locks.open("zookeeper://carol@" + zk.connectString() + path))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("user 'carol' has no password");
        try (CuratorFramework admin = admin(null)) {
            assertThat(admin.checkExists().forPath("/half-credentials"))
                    .as("nothing created with open ACLs")
                    .isNull();
        }
    }

    @Test
    @DisplayName("passwords are redacted from the configuration's toString, also with several hosts")
    void passwordsAreRedacted() {
        LockConfig config = LockConfig.of("zookeeper://bob:hunter2@127.0.0.1:1,127.0.0.1:2/app");
        assertThat(config.toString()).doesNotContain("hunter2").contains("bob:***@");
    }

    @Test
    @DisplayName(
            "an unreachable ensemble fails with BackendUnavailableException within the connection timeout, never hangs")
    void unreachableEnsembleFailsClosed() {
        long start = System.nanoTime();
        String uri = "zookeeper://127.0.0.1:" + LocalServer.freePort() + ",127.0.0.1:" + LocalServer.freePort()
                + "?sessionTimeout=4s&connectionTimeout=500ms";
        assertThatThrownBy(() -> Locks.open(uri))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("connectionTimeout=PT0.5S");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(timing.millis(10_000));
    }

    @Test
    @DisplayName("bad values name the setting: timeouts, ACL without credentials, ports, base path")
    void badValuesNameTheSetting() {
        assertThatThrownBy(() -> Locks.open(base() + "?sessionTimeout=5"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("sessionTimeout");
        assertThatThrownBy(() -> Locks.open(base() + "?sessionTimeout=2h"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("sessionTimeout");
        assertThatThrownBy(() -> Locks.open(base() + "?connectionTimeout=1ms"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("connectionTimeout");
        assertThatThrownBy(() -> Locks.open(base() + "?acl=creator"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("acl=creator needs credentials");
        assertThatThrownBy(() -> Locks.open(base() + "?acl=everyone"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("acl must be");
        assertThatThrownBy(() -> Locks.open("zookeeper://127.0.0.1:99999"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("port");
        assertThatThrownBy(() -> Locks.open(base() + "?basePath=relative"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("basePath");
    }

    @Test
    @DisplayName(
            "a lease time longer than the negotiated session is refused with IllegalArgumentException, nothing taken")
    void leaseLongerThanTheSessionIsRefused() {
        try (LockProvider locks = Locks.open(base() + "?sessionTimeout=4s&connectionTimeout=2s")) {
            assertThatThrownBy(() -> locks.tryAcquire("too-long", LeaseOptions.of(Duration.ofSeconds(5))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("leaseTime PT5S")
                    .hasMessageContaining("4000 ms");
            Optional<Lease> ok = locks.tryAcquire("too-long", LeaseOptions.of(Duration.ofSeconds(4)));
            assertThat(ok).isPresent();
            ok.get().release();
        }
    }

    static CuratorFramework admin(String chroot) {
        CuratorFramework curator = CuratorFrameworkFactory.newClient(
                zk.connectString() + (chroot == null ? "" : chroot), 10_000, 2_000, new RetryNTimes(3, 100));
        curator.start();
        return curator;
    }
}
