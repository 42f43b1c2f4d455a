package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockRuntime;
import io.lockstep.tck.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.Jedis;

/**
 * A lease taken by a fresh provider (its pools have no idle connection yet, so some node's grant request
 * goes through a worker and may still be unanswered when the quorum decides) leaves nothing behind on
 * any node once its release returned true: every node is freed within the node timeout and a margin.
 */
@DisplayName("Redlock release on fresh providers frees every node")
class RedlockReleaseColdPoolTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final int TRIALS = 15;
    private static RedisNodes nodes;

    @BeforeAll
    static void startNodes() {
        nodes = RedisNodes.start(3);
    }

    @AfterAll
    static void stopNodes() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    @DisplayName("no key outlives release() by more than the node timeout plus a margin")
    void everyNodeIsFreedSoonAfterRelease() {
        everyNodeIsFreedSoonAfterRelease(false);
    }

    @Test
    @DisplayName("the same with a Redis 7 user that may not publish")
    void everyNodeIsFreedSoonAfterReleaseWithAnAclUser() {
        everyNodeIsFreedSoonAfterRelease(true);
    }

    private void everyNodeIsFreedSoonAfterRelease(boolean acl) {
        RedlockOptions options = RedlockOptions.defaults();
        // The node timeout, the request deadline's slack, and a margin for a loaded machine.
        Duration bound =
                options.nodeTimeoutFor(LEASE).plus(Timing.fromSystemProperty().millis(500));
        List<String> left = new ArrayList<>();
        long worst = 0;
        for (int t = 0; t < TRIALS; t++) {
            String name = "cold-" + t;
            nodes.close();
            nodes = RedisNodes.start(3);
            DefaultJedisClientConfig config = DefaultJedisClientConfig.builder().build();
            if (acl) {
                for (int i = 0; i < nodes.size(); i++) {
                    try (Jedis jedis = nodes.jedis(i)) {
                        jedis.aclSetUser("app", "on", ">app-password", "~*", "+@all", "resetchannels");
                    }
                }
                config = DefaultJedisClientConfig.builder()
                        .user("app")
                        .password("app-password")
                        .build();
            }
            try (RedlockLockProvider locks =
                    RedlockLockProvider.connect(nodes.addresses(), config, options, LockRuntime.defaults())) {
                Lease lease = locks.tryAcquire(name, LeaseOptions.of(LEASE)).orElseThrow();
                assertThat(lease.release()).as("release %d", t).isTrue();
                long released = System.nanoTime();
                long deadline = System.nanoTime() + bound.toNanos();
                // A late grant may land on a node after it was looked at: look at every node until the
                // bound, then require every node free.
                long lastSeen = -1;
                while (System.nanoTime() - deadline < 0) {
                    for (int n = 0; n < nodes.size(); n++) {
                        try (Jedis jedis = nodes.jedis(n)) {
                            if (jedis.exists(name)) {
                                lastSeen = System.nanoTime() - released;
                            }
                        }
                    }
                    sleepMillis(5);
                }
                worst = Math.max(worst, lastSeen);
                for (int n = 0; n < nodes.size(); n++) {
                    try (Jedis jedis = nodes.jedis(n)) {
                        if (jedis.exists(name)) {
                            left.add("trial " + t + " node " + n + " pttl=" + jedis.pttl(name));
                        }
                    }
                }
            }
        }
        assertThat(left)
                .as(
                        "keys still there %s after release() returned true (latest seen %d ms after)",
                        bound, worst / 1_000_000)
                .isEmpty();
    }

    private static void sleepMillis(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
