package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockRuntime;
import io.lockstep.redlock.internal.RedlockBackend;
import io.lockstep.tck.faults.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;

/**
 * Nodes that answer, but too slowly: every node is reached through a TCP proxy that can delay one
 * direction. A reply after the per-node timeout never counts, and nothing is left behind on the slow
 * nodes: a late reply's grant is released, a late request is refused by its deadline.
 */
@DisplayName("Redlock with nodes that answer too slowly")
class RedlockSlowNodesTest {

    private static final Duration NODE_TIMEOUT = Duration.ofMillis(100);
    private static final Duration LONG = Duration.ofSeconds(30);
    private static RedisNodes nodes;
    private static final List<TcpProxy> proxies = new ArrayList<>();

    @BeforeAll
    static void start() {
        nodes = RedisNodes.start(5);
        for (int i = 0; i < nodes.size(); i++) {
            proxies.add(TcpProxy.start(nodes.server(i).host(), nodes.port(i)));
        }
    }

    @AfterAll
    static void stop() {
        proxies.forEach(TcpProxy::close);
        nodes.close();
    }

    @AfterEach
    void heal() {
        proxies.forEach(TcpProxy::heal);
        for (TcpProxy proxy : proxies) {
            proxy.delay(TcpProxy.Direction.CLIENT_TO_SERVER, Duration.ZERO);
            proxy.delay(TcpProxy.Direction.SERVER_TO_CLIENT, Duration.ZERO);
        }
        nodes.heal();
    }

    private static RedisNodes.Client client() {
        List<RedlockBackend.NodeSpec> specs = new ArrayList<>();
        for (TcpProxy proxy : proxies) {
            JedisPoolConfig pool = new JedisPoolConfig();
            pool.setJmxEnabled(false);
            HostAndPort address = new HostAndPort(proxy.host(), proxy.port());
            specs.add(new RedlockBackend.NodeSpec(
                    address.toString(),
                    new JedisPool(
                            pool,
                            address,
                            DefaultJedisClientConfig.builder()
                                    .socketTimeoutMillis(2000)
                                    .build()),
                    true));
        }
        RedlockBackend backend = new RedlockBackend(
                specs, RedlockOptions.defaults().withNodeTimeout(NODE_TIMEOUT), LockRuntime.defaults());
        return new RedisNodes.Client(new RedlockLockProvider(backend, LockRuntime.defaults()), backend);
    }

    private static void delay(TcpProxy.Direction direction, Duration delay, int... which) {
        for (int i : which) {
            proxies.get(i).delay(direction, delay);
        }
    }

    @Test
    @DisplayName("two slow nodes of five: the lock is granted by the other three without waiting for them")
    void twoSlowNodesAreNotWaitedFor() {
        try (RedisNodes.Client a = client()) {
            a.provider().tryAcquire("warm", LeaseOptions.of(LONG)).orElseThrow().release();
            delay(TcpProxy.Direction.SERVER_TO_CLIENT, Duration.ofMillis(400), 0, 4);
            for (int i = 0; i < 3; i++) {
                long start = System.nanoTime();
                Lease lease = a.provider()
                        .tryAcquire("two-slow", LeaseOptions.of(LONG))
                        .orElseThrow();
                assertThat(Duration.ofNanos(System.nanoTime() - start))
                        .as("attempt %d", i)
                        .isLessThan(NODE_TIMEOUT.multipliedBy(3));
                assertThat(lease.release()).isTrue();
            }
        }
    }

    @Test
    @DisplayName("replies that come after the timeout do not count, and their grants are released")
    void lateRepliesDoNotCountAndLeaveNothing() throws Exception {
        try (RedisNodes.Client a = client();
                RedisNodes.Client b = client()) {
            a.provider().tryAcquire("warm", LeaseOptions.of(LONG)).orElseThrow().release();
            b.provider().tryAcquire("warm", LeaseOptions.of(LONG)).orElseThrow().release();
            delay(TcpProxy.Direction.SERVER_TO_CLIENT, Duration.ofMillis(300), 1, 2, 3);
            assertThatThrownBy(() -> a.provider().tryAcquire("late-reply", LeaseOptions.of(LONG)))
                    .isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining(":" + proxies.get(1).port())
                    .hasMessageContaining(":" + proxies.get(3).port());
            delay(TcpProxy.Direction.SERVER_TO_CLIENT, Duration.ZERO, 1, 2, 3);
            Thread.sleep(400); // the delayed replies and releases have all gone through
            for (int i = 0; i < nodes.size(); i++) {
                try (Jedis jedis = nodes.jedis(i)) {
                    assertThat(jedis.exists("late-reply"))
                            .as("key left on node %d", i)
                            .isFalse();
                }
            }
            assertThat(b.provider().tryAcquire("late-reply", LeaseOptions.of(LONG)))
                    .isPresent();
        }
    }

    @Test
    @DisplayName("requests that reach a node after their deadline are refused there, leaving no grant behind")
    void lateRequestsAreRefusedByTheNode() throws Exception {
        try (RedisNodes.Client a = client();
                RedisNodes.Client b = client()) {
            a.provider().tryAcquire("warm", LeaseOptions.of(LONG)).orElseThrow().release();
            b.provider().tryAcquire("warm", LeaseOptions.of(LONG)).orElseThrow().release();
            delay(TcpProxy.Direction.CLIENT_TO_SERVER, Duration.ofMillis(400), 0, 1, 2);
            assertThatThrownBy(() -> a.provider().tryAcquire("late-request", LeaseOptions.of(LONG)))
                    .isInstanceOf(BackendUnavailableException.class);
            Thread.sleep(2_000); // every delayed request (retries included) has reached its node by now
            delay(TcpProxy.Direction.CLIENT_TO_SERVER, Duration.ZERO, 0, 1, 2);
            for (int i = 0; i < nodes.size(); i++) {
                try (Jedis jedis = nodes.jedis(i)) {
                    assertThat(jedis.exists("late-request"))
                            .as("key left on node %d", i)
                            .isFalse();
                }
            }
            assertThat(b.provider().tryAcquire("late-request", LeaseOptions.of(LONG)))
                    .isPresent();
        }
    }
}
