package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.Locks;
import io.lockstep.StrengthTier;
import io.lockstep.redlock.internal.RedlockUri;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPool;

/** Bad configuration fails when the provider is built, naming the setting and the value. */
@DisplayName("Redlock configuration")
class RedlockConfigurationTest {

    @Test
    @DisplayName("a multi-host redlock URI is parsed from its raw authority, with settings and credentials")
    void parsesMultiHostUris() {
        RedlockUri uri = RedlockUri.parse(
                LockConfig.of(
                        "redlock://app:s%40cret@h1:7001,H2.example:7002,10.0.0.3:7003,h4/3?driftFactor=0.02&keyPrefix=lk:&quorum=4"));
        assertThat(uri.nodes())
                .containsExactly(
                        new HostAndPort("h1", 7001),
                        new HostAndPort("H2.example", 7002),
                        new HostAndPort("10.0.0.3", 7003),
                        new HostAndPort("h4", 6379));
        assertThat(uri.options().driftFactor()).isEqualTo(0.02);
        assertThat(uri.options().keyPrefix()).isEqualTo("lk:");
        assertThat(uri.options().quorum()).hasValue(4);
        assertThat(uri.clientConfig().getUser()).isEqualTo("app");
        assertThat(uri.clientConfig().getPassword()).isEqualTo("s@cret");
        assertThat(uri.clientConfig().getDatabase()).isEqualTo(3);
    }

    @Test
    @DisplayName("Locks.open finds the redlock factory by scheme and builds a QUORUM provider without connecting")
    void opensByScheme() {
        try (LockProvider provider = Locks.open("redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3")) {
            assertThat(provider).isInstanceOf(RedlockLockProvider.class);
            assertThat(provider.info().name()).isEqualTo("redlock");
            assertThat(provider.info().tier()).isEqualTo(StrengthTier.QUORUM);
            assertThat(((RedlockLockProvider) provider).quorum()).isEqualTo(2);
            assertThat(provider.toString()).contains("127.0.0.1:1", "127.0.0.1:3");
        }
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"redlock:///x", "redlock://?driftFactor=0.1", "redlock:/x"})
    @DisplayName("a URI without nodes names the nodes")
    void emptyNodeListIsRejected(String uri) {
        assertThatThrownBy(() -> Locks.open(uri))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("nodes must not be empty");
        // java.net.URI itself refuses "redlock://" before the factory sees it.
        assertThatThrownBy(() -> Locks.open("redlock://")).isInstanceOf(LockConfigurationException.class);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(
            strings = {
                "redlock://h1:6379,,h3:6379",
                "redlock://h1:6379,h2:port,h3:6379",
                "redlock://h1:6379,h2:70000,h3:6379",
                "redlock://h1:6379,h_2-:1,h3:6379",
                "redlock://h1:6379,h2:0,h3:6379"
            })
    @DisplayName("an unparsable node names the nodes and the bad entry")
    void unparsableHostsAreRejected(String uri) {
        assertThatThrownBy(() -> Locks.open(uri))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("nodes");
        // IPv6 literals cannot appear in a multi-host authority: java.net.URI refuses '[' there. The
        // message does not echo the text (it might hold a password), only where it failed.
        assertThatThrownBy(() -> Locks.open("redlock://h1:6379,[::1]:1,h3:6379"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("not a valid URI")
                .hasMessageNotContaining("h3:6379");
    }

    @Test
    @DisplayName("the default node timeout is a tenth of the lease, at least 10 ms and at most 250 ms; a set one wins")
    void defaultNodeTimeoutFollowsTheLease() {
        RedlockOptions defaults = RedlockOptions.defaults();
        assertThat(defaults.nodeTimeoutFor(Duration.ofMillis(50))).isEqualTo(Duration.ofMillis(10));
        assertThat(defaults.nodeTimeoutFor(Duration.ofMillis(300))).isEqualTo(Duration.ofMillis(30));
        assertThat(defaults.nodeTimeoutFor(Duration.ofMillis(1_500))).isEqualTo(Duration.ofMillis(150));
        assertThat(defaults.nodeTimeoutFor(Duration.ofSeconds(10))).isEqualTo(Duration.ofMillis(250));
        assertThat(defaults.withNodeTimeout(Duration.ofMillis(100)).nodeTimeoutFor(Duration.ofMillis(300)))
                .isEqualTo(Duration.ofMillis(100));
    }

    @Test
    @DisplayName("minNodeTimeout and maxNodeTimeout bound the lease-derived node timeout; a fixed one excludes them")
    void nodeTimeoutRangeBoundsTheDefault() {
        RedlockOptions ranged = RedlockUri.parse(
                        LockConfig.of("redlock://h1,h2,h3?minNodeTimeout=100ms&maxNodeTimeout=1s"))
                .options();
        assertThat(ranged.nodeTimeout()).isEmpty();
        assertThat(ranged.nodeTimeoutFor(Duration.ofMillis(300))).isEqualTo(Duration.ofMillis(100));
        assertThat(ranged.nodeTimeoutFor(Duration.ofSeconds(3))).isEqualTo(Duration.ofMillis(300));
        assertThat(ranged.nodeTimeoutFor(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(1));

        RedlockOptions floorOnly = RedlockUri.parse(LockConfig.of("redlock://h1,h2,h3?minNodeTimeout=50ms"))
                .options();
        assertThat(floorOnly.minNodeTimeout()).isEqualTo(Duration.ofMillis(50));
        assertThat(floorOnly.maxNodeTimeout()).isEqualTo(RedlockOptions.DEFAULT_MAX_NODE_TIMEOUT);
        assertThat(floorOnly.nodeTimeoutFor(Duration.ofMillis(300))).isEqualTo(Duration.ofMillis(50));

        // The later call wins, both ways.
        RedlockOptions fixed = ranged.withNodeTimeout(Duration.ofMillis(70));
        assertThat(fixed.nodeTimeoutFor(Duration.ofSeconds(30))).isEqualTo(Duration.ofMillis(70));
        assertThat(fixed.withNodeTimeoutRange(Duration.ofMillis(20), Duration.ofMillis(40))
                        .nodeTimeoutFor(Duration.ofSeconds(30)))
                .isEqualTo(Duration.ofMillis(40));
        assertThat(ranged.toString()).contains("TTL/10 in [PT0.1S, PT1S]");
    }

    @Test
    @DisplayName("a bad node timeout range names the setting and its value and builds nothing")
    void badNodeTimeoutRangeIsRejected() {
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?minNodeTimeout=2s&maxNodeTimeout=1s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("minNodeTimeout must not exceed maxNodeTimeout, was PT2S > PT1S");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?minNodeTimeout=1s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("minNodeTimeout must not exceed maxNodeTimeout, was PT1S > PT0.25S");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?maxNodeTimeout=11s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("maxNodeTimeout must be between")
                .hasMessageContaining("PT11S");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?nodeTimeout=100ms&maxNodeTimeout=1s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("nodeTimeout fixes the node timeout")
                .hasMessageContaining("set one or the other");
        assertThatThrownBy(() -> RedlockOptions.defaults().withNodeTimeoutRange(Duration.ZERO, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("minNodeTimeout must be between");
    }

    @Test
    @DisplayName("an unknown setting is an error naming it, a near miss, and the known settings")
    void unknownSettingsAreRejected() {
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?nodeTimout=50ms"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("unknown setting 'nodeTimout'")
                .hasMessageContaining("did you mean 'nodeTimeout'")
                .hasMessageContaining("maxLeaseTime, maxNodeTimeout, minNodeTimeout, nodeTimeout, persistent");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?keyprefix=billing:"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("did you mean 'keyPrefix'");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?poolSize=4"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("unknown setting 'poolSize'");
    }

    @Test
    @DisplayName("node names with '_' (Docker Compose service names) are accepted")
    void underscoreHostsAreAccepted() {
        RedlockUri uri = RedlockUri.parse(LockConfig.of("redlock://redis_a:7001,redis_b,redis-c_1:7003"));
        assertThat(uri.nodes())
                .containsExactly(
                        new HostAndPort("redis_a", 7001),
                        new HostAndPort("redis_b", 6379),
                        new HostAndPort("redis-c_1", 7003));
    }

    @Test
    @DisplayName("a node given twice is rejected, case-insensitively")
    void duplicateNodesAreRejected() {
        assertThatThrownBy(() -> Locks.open("redlock://h1:6379,h2:6379,H1:6379"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("distinct")
                .hasMessageContaining("H1:6379");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h1:6379,h3"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("h1:6379");
    }

    @ParameterizedTest(name = "[{index}] driftFactor={0}")
    @ValueSource(strings = {"-0.01", "0.5", "0.9", "NaN", "abc", "Infinity"})
    @DisplayName("a driftFactor outside [0, 0.5) is rejected naming the field and the value")
    void badDriftFactorIsRejected(String drift) {
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?driftFactor=" + drift))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("driftFactor")
                .hasMessageContaining(drift);
        if (!drift.equals("abc")) {
            double value = Double.parseDouble(drift);
            assertThatThrownBy(() -> RedlockOptions.defaults().withDriftFactor(value))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("driftFactor");
        }
    }

    @Test
    @DisplayName("drift factors 0 and just under 0.5 are accepted")
    void driftFactorBoundsAreAccepted() {
        assertThat(RedlockOptions.defaults().withDriftFactor(0).driftFactor()).isZero();
        assertThat(RedlockOptions.defaults().withDriftFactor(0.499).driftFactor())
                .isEqualTo(0.499);
    }

    @Test
    @DisplayName("other bad settings name the setting: quorum, nodeTimeout, keyPrefix, persistent")
    void otherBadSettingsAreNamed() {
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?quorum=1"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("quorum must be between 2 and 3");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?quorum=4"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("quorum");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?nodeTimeout=20s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("nodeTimeout");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?keyPrefix=%07"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3?persistent=yes"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("persistent");
        assertThatThrownBy(() -> Locks.open("redlock://h1,h2,h3/db"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("database");
    }

    @Test
    @DisplayName("an even number of nodes is accepted with a warning and needs N/2+1 of them")
    void evenNodeCountIsAcceptedWithAWarning() {
        try (LockProvider provider = Locks.open("redlock://h1,h2,h3,h4")) {
            assertThat(((RedlockLockProvider) provider).quorum()).isEqualTo(3);
        }
    }

    @Test
    @DisplayName("explicit wiring rejects no pools, the same pool twice, and a lease too short for the drift")
    void explicitWiringIsValidated() {
        assertThatThrownBy(() -> new RedlockLockProvider(List.of(), RedlockOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nodes must not be empty");
        try (JedisPool pool = new JedisPool("127.0.0.1", 1)) {
            assertThatThrownBy(() -> new RedlockLockProvider(List.of(pool, pool), RedlockOptions.defaults()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("distinct");
        }
        assertThatThrownBy(() -> RedlockLockProvider.connect(
                        List.of(new HostAndPort("h1", 1), new HostAndPort("h1", 1)),
                        DefaultJedisClientConfig.builder().build(),
                        RedlockOptions.defaults(),
                        LockRuntime.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("h1:1");
        assertThatThrownBy(() -> RedlockOptions.defaults().withRetryDelay(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("retryDelay");
    }

    @Test
    @DisplayName("a lease shorter than the drift allowance is refused with the allowance named")
    void leaseShorterThanDriftIsRefused() {
        try (LockProvider provider = Locks.open("redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3")) {
            assertThatThrownBy(() -> provider.tryAcquire("x", io.lockstep.LeaseOptions.of(Duration.ofMillis(2))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("drift");
        }
    }
}
