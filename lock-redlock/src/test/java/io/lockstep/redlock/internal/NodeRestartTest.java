package io.lockstep.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.MonotonicClock;
import io.lockstep.tck.servers.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;

/**
 * A node that restarted without persistence must be quarantined before any of its votes can count:
 * eight threads borrow new connections from a just-restarted node at once, and none may get one.
 * (The review's race: the new {@code run_id} was recorded, then the persistence checked in two round
 * trips, and only then the quarantine set; concurrent borrowers saw the new {@code run_id} and voted.)
 */
@DisplayName("A restarted Redlock node under concurrent borrowers")
class NodeRestartTest {

    private static final int THREADS = 8;
    private static final int RESTARTS = 12;
    private static RedisServer server;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @ParameterizedTest(name = "declared persistent: {0}")
    @ValueSource(booleans = {true, false})
    @DisplayName("no borrower of a just-restarted node gets a connection (a vote) before its quarantine")
    void noVoteCountsBeforeTheQuarantine(boolean declaredPersistent) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        int votes = 0;
        try {
            for (int restart = 0; restart < RESTARTS; restart++) {
                Node node = node(declaredPersistent);
                try {
                    assertThat(borrow(node))
                            .as("the first borrow learns the run_id")
                            .isTrue();
                    server.restart(); // empty: no persistence
                    node.pool().clear(); // the idle connection is dead; every borrower checks a new one
                    CyclicBarrier go = new CyclicBarrier(THREADS);
                    List<Future<Boolean>> borrowers = new ArrayList<>();
                    for (int t = 0; t < THREADS; t++) {
                        borrowers.add(threads.submit(() -> {
                            go.await();
                            return borrow(node);
                        }));
                    }
                    for (Future<Boolean> borrower : borrowers) {
                        if (borrower.get(10, TimeUnit.SECONDS)) {
                            votes++;
                        }
                    }
                    assertThat(node.isQuarantined()).isTrue();
                } finally {
                    node.close();
                }
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(votes)
                .as("borrows of a restarted node that would have counted, over %d restarts", RESTARTS)
                .isZero();
    }

    private static Node node(boolean declaredPersistent) {
        JedisPoolConfig config = new JedisPoolConfig();
        config.setMaxTotal(THREADS + 1);
        config.setJmxEnabled(false);
        JedisPool pool = new JedisPool(
                config,
                new HostAndPort(server.host(), server.port()),
                DefaultJedisClientConfig.builder().socketTimeoutMillis(2000).build());
        return new Node(
                0,
                server.host() + ":" + server.port(),
                pool,
                true,
                MonotonicClock.SYSTEM,
                declaredPersistent,
                () -> TimeUnit.MINUTES.toNanos(1),
                THREADS);
    }

    /** Whether a borrow succeeded, that is, whether a fan-out would have counted the node's reply. */
    private static boolean borrow(Node node) {
        if (!node.takeSlot(TimeUnit.SECONDS.toNanos(5))) {
            throw new AssertionError("no slot");
        }
        try {
            Jedis jedis = node.borrow(System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
            node.giveBack(jedis);
            return true;
        } catch (Node.NodeFailure e) {
            return false;
        }
    }
}
