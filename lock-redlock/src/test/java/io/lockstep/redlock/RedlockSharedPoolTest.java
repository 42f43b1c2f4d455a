package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockRuntime;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;

/** A pool the caller lends to the provider and keeps using for its own commands. */
@DisplayName("Redlock over a pool the caller shares")
class RedlockSharedPoolTest {

    private static final int SOCKET_TIMEOUT_MILLIS = 3_000;
    private static RedisNodes nodes;

    @BeforeAll
    static void startNodes() {
        nodes = RedisNodes.start(1);
    }

    @AfterAll
    static void stopNodes() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    @DisplayName("a connection comes back to the caller's pool with the caller's socket timeout, not a node timeout")
    void connectionsComeBackWithThePoolsSocketTimeout() {
        JedisPoolConfig poolConfig = new JedisPoolConfig();
        poolConfig.setJmxEnabled(false);
        poolConfig.setMaxTotal(1); // the provider and the caller share the one connection
        try (JedisPool pool = new JedisPool(
                        poolConfig,
                        new HostAndPort(nodes.server(0).host(), nodes.port(0)),
                        DefaultJedisClientConfig.builder()
                                .socketTimeoutMillis(SOCKET_TIMEOUT_MILLIS)
                                .build());
                RedlockLockProvider provider =
                        new RedlockLockProvider(List.of(pool), RedlockOptions.defaults(), LockRuntime.defaults())) {
            LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30));
            assertThat(RedlockOptions.defaults().nodeTimeoutFor(options.leaseTime()))
                    .isLessThan(Duration.ofSeconds(1));
            Lease lease = provider.tryAcquire("shared-pool", options).orElseThrow();
            assertThat(lease.release()).isTrue();

            try (Jedis jedis = pool.getResource()) {
                assertThat(jedis.getConnection().getSoTimeout()).isEqualTo(SOCKET_TIMEOUT_MILLIS);
                // A blocking read of a second outlasts the node timeout: with that timeout left on the socket
                // it would fail; with the pool's it returns empty.
                assertThat(jedis.blpop(1.0, "shared-pool/empty")).isNull();
            }
        }
    }
}
