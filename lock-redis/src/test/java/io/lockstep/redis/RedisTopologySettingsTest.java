package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

@DisplayName("Sentinel, Cluster and waitReplicas settings")
class RedisTopologySettingsTest {

    @Test
    @DisplayName("a waitTimeout not shorter than the socket timeout is refused, naming both")
    void waitTimeoutMustBeShorterThanTimeout() {
        assertThatThrownBy(() -> Locks.open("redis://127.0.0.1:6399?timeout=1s&waitReplicas=1&waitTimeout=1s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("waitTimeout")
                .hasMessageContaining("PT1S");
    }

    @Test
    @DisplayName("waitReplicas outside 0..16 is refused, naming the setting and the value")
    void waitReplicasIsBounded() {
        assertThatThrownBy(() -> Locks.open("redis://127.0.0.1:6399?waitReplicas=17"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("waitReplicas")
                .hasMessageContaining("17");
    }

    @Test
    @DisplayName("a sentinel URI without a master name is refused")
    void sentinelNeedsAMasterName() {
        assertThatThrownBy(() -> Locks.open("redis-sentinel://127.0.0.1:26399"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("masterName");
    }

    @Test
    @DisplayName("sentinelAuth must be true or false")
    void sentinelAuthIsABoolean() {
        assertThatThrownBy(() -> Locks.open("redis-sentinel://127.0.0.1:26399/mymaster?sentinelAuth=yes"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("sentinelAuth")
                .hasMessageContaining("yes");
    }

    @Test
    @DisplayName("a cluster URI with a database is refused")
    void clusterHasNoDatabase() {
        assertThatThrownBy(() -> Locks.open("redis-cluster://127.0.0.1:7000,127.0.0.1:7001/3"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("database");
    }

    @Test
    @DisplayName("unreachable sentinels fail closed at open, naming them and never the password")
    void unreachableSentinelsFailClosedWithoutThePassword() {
        int port = LocalServer.freePort();
        assertThatThrownBy(() -> Locks.open("redis-sentinel://app:s3cr%2Bet@127.0.0.1:" + port + "/mymaster"))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("127.0.0.1:" + port)
                .hasMessageNotContaining("s3cr");
    }

    @Test
    @DisplayName("waitReplicas=1 on a server without replicas fails closed and leaves no lock behind")
    void waitReplicasWithoutReplicasFailsClosed() {
        try (RedisServer redis = RedisServer.start();
                LockProvider locks = Locks.open(redis.uri() + "?timeout=500ms&waitReplicas=1&waitTimeout=50ms");
                Jedis jedis = new Jedis(redis.host(), redis.port())) {
            assertThatThrownBy(() -> locks.tryAcquire("unacknowledged", LeaseOptions.of(Duration.ofSeconds(30))))
                    .isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("waitReplicas=1");
            assertThat(jedis.exists("lockstep:{unacknowledged}")).isFalse();
        }
    }

    @Test
    @DisplayName("waitReplicas=1 with a replica grants, extends and releases")
    void waitReplicasWithAReplicaGrants() {
        try (RedisServer primary = RedisServer.start();
                RedisServer replica =
                        RedisServer.startWith(List.of("--replicaof", "127.0.0.1", Integer.toString(primary.port())));
                LockProvider locks = Locks.open(primary.uri() + "?timeout=2s&waitReplicas=1&waitTimeout=1s");
                Jedis onReplica = new Jedis(replica.host(), replica.port())) {
            Lease lease = retryingUntilTheReplicaIsInSync(locks);
            assertThat(onReplica.get("lockstep:{acknowledged}"))
                    .as("the grant reached the replica before it counted")
                    .startsWith(lease.ownerToken() + " ");
            assertThat(lease.extend(Duration.ofSeconds(30))).isTrue();
            lease.release();
        }
    }

    private static Lease retryingUntilTheReplicaIsInSync(LockProvider locks) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            try {
                return locks.tryAcquire("acknowledged", LeaseOptions.of(Duration.ofSeconds(30)))
                        .orElseThrow();
            } catch (BackendUnavailableException e) {
                // the replica's first sync may not be done yet
                assertThat(System.nanoTime() - deadline)
                        .as("a replica acknowledging")
                        .isNegative();
            }
        }
    }
}
