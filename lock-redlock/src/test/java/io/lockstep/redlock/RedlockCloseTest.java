package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.tck.faults.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * Closing a provider while a release is still being retried in the background on a node that missed
 * it: close() finishes it (within its short grace) instead of dropping it, so the key does not stay on
 * that node for the rest of its TTL.
 */
@DisplayName("Redlock close() and background releases")
class RedlockCloseTest {

    /**
     * Long enough for the grant to reach the third node (through the proxy) on a starved machine: a node
     * refuses a request that arrives after its deadline, so with 100 ms the key this test starts from
     * sometimes never appeared there (R25). The release the proxy drops times out after it either way.
     */
    private static final Duration NODE_TIMEOUT = Duration.ofSeconds(1);

    private static final Duration TTL = Duration.ofSeconds(30);
    /** The node that misses the release: reached through a proxy that discards what the client sends. */
    private static final int MISSING = 2;

    private static RedisNodes nodes;
    private static TcpProxy proxy;

    @BeforeAll
    static void start() {
        nodes = RedisNodes.start(3);
        proxy = TcpProxy.start(nodes.server(MISSING).host(), nodes.port(MISSING));
    }

    @AfterAll
    static void stop() {
        if (proxy != null) {
            proxy.close();
        }
        if (nodes != null) {
            nodes.close();
        }
    }

    @AfterEach
    void heal() {
        proxy.heal();
        nodes.heal();
    }

    @Test
    @DisplayName("a release still retried on a node that missed it is finished by close(), not dropped")
    void closeFinishesAReleaseStillBeingRetried() throws Exception {
        List<HostAndPort> addresses = new ArrayList<>(nodes.addresses());
        addresses.set(MISSING, new HostAndPort(proxy.host(), proxy.port()));
        try (RedisNodes.Client client =
                        nodes.client(RedlockOptions.defaults().withNodeTimeout(NODE_TIMEOUT), addresses);
                Jedis missing = nodes.jedis(MISSING)) {
            // A first round opens the connections, so the next one is answered by every node in time.
            client.provider()
                    .tryAcquire("close-warm", LeaseOptions.of(TTL))
                    .orElseThrow()
                    .release();
            Lease lease = client.provider()
                    .tryAcquire("close-release", LeaseOptions.of(TTL))
                    .orElseThrow();
            // The grant may return on the quorum's replies before the third node's: wait for its key there.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!missing.exists("close-release")) {
                assertThat(System.nanoTime() - deadline)
                        .as("the grant reaching the third node")
                        .isNegative();
                Thread.sleep(10);
            }

            // The release reaches two nodes (a quorum) and is lost on the way to the third, where it is
            // retried in the background.
            proxy.drop(TcpProxy.Direction.CLIENT_TO_SERVER);
            assertThat(lease.release()).isTrue();
            assertThat(missing.exists("close-release"))
                    .as("key on the node that missed the release")
                    .isTrue();

            // The node becomes reachable again only once close() has begun: a close that drops the
            // pending retry has returned by then (it takes a few milliseconds), one that finishes it
            // is still waiting and its next retry gets through.
            Thread healer = new Thread(() -> {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                proxy.heal();
            });
            healer.start();
            client.close();
            healer.join();
            assertThat(missing.exists("close-release"))
                    .as("key on the node that missed the release, after close() returned (TTL %s)", TTL)
                    .isFalse();
        }
    }
}
