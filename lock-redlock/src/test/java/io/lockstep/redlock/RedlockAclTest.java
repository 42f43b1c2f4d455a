package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockRuntime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.Jedis;

/**
 * Redis 7 users without permission on any pub/sub channel (the default {@code acl-pubsub-default
 * resetchannels}): a release is a release, and waiters fall back to polling. (The review's finding:
 * the release script's PUBLISH failed after its DEL, so a done release was reported as failed, and the
 * subscribers kept reconnecting.)
 */
@DisplayName("Redlock with a Redis user that may not publish or subscribe")
class RedlockAclTest {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static RedisNodes nodes;

    @BeforeAll
    static void startNodes() {
        nodes = RedisNodes.start(3);
        for (int i = 0; i < nodes.size(); i++) {
            try (Jedis jedis = nodes.jedis(i)) {
                jedis.aclSetUser("app", "on", ">app-password", "~*", "+@all", "resetchannels");
            }
        }
    }

    @AfterAll
    static void stopNodes() {
        if (nodes != null) {
            nodes.close();
        }
    }

    private static RedlockLockProvider provider() {
        return RedlockLockProvider.connect(
                nodes.addresses(),
                DefaultJedisClientConfig.builder()
                        .user("app")
                        .password("app-password")
                        .build(),
                RedlockOptions.defaults().withRetryDelay(Duration.ofMillis(50)),
                LockRuntime.defaults());
    }

    @Test
    @DisplayName("release returns true and frees the lock on every node")
    void releaseIsNotMisreported() {
        try (RedlockLockProvider locks = provider()) {
            for (int i = 0; i < 3; i++) {
                Lease lease = locks.tryAcquire("acl-job", LeaseOptions.of(LONG)).orElseThrow();
                assertThat(lease.release()).as("release %d", i).isTrue();
                // True means a quorum deleted; a node whose grant request was still unanswered is freed
                // once that request's deadline passed (node timeout + slack): every node within a bound.
                assertFreedEverywhere("acl-job", i);
            }
        }
    }

    @Test
    @DisplayName("a waiter gets a released lock by polling, and the subscribers give up instead of retrying")
    void waitersPoll() throws Exception {
        try (RedlockLockProvider holder = provider();
                RedlockLockProvider waiter = provider()) {
            Lease held = holder.tryAcquire("acl-wait", LeaseOptions.of(LONG)).orElseThrow();
            CompletableFuture<Lease> next = CompletableFuture.supplyAsync(
                    () -> waiter.acquire("acl-wait", LeaseOptions.of(LONG).withWaitTime(Duration.ofSeconds(10))));
            Thread.sleep(300);
            assertThat(next).isNotDone();
            long releasedAt = System.nanoTime();
            assertThat(held.release()).isTrue();
            Lease lease = next.get(10, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - releasedAt))
                    .as("handoff by polling every retry delay")
                    .isLessThan(Duration.ofSeconds(2));
            assertThat(lease.release()).isTrue();
            // Every subscriber was refused by the ACL and stopped, rather than reconnecting without end.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (subscriberThreads() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(subscriberThreads())
                    .as("release subscribers still trying")
                    .isZero();
        }
    }

    /**
     * Looks at every node until the node timeout plus a margin has passed since the release (a late grant
     * may land after a node was looked at), then requires the key gone everywhere.
     */
    private static void assertFreedEverywhere(String key, int round) {
        long bound = RedlockOptions.defaults().nodeTimeoutFor(LONG).toNanos() + TimeUnit.MILLISECONDS.toNanos(500);
        long deadline = System.nanoTime() + bound;
        while (System.nanoTime() - deadline < 0) {
            try {
                TimeUnit.MILLISECONDS.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
        for (int n = 0; n < nodes.size(); n++) {
            try (Jedis jedis = nodes.jedis(n)) {
                assertThat(jedis.exists(key))
                        .as("key on node %d %d ms after release %d", n, TimeUnit.NANOSECONDS.toMillis(bound), round)
                        .isFalse();
            }
        }
    }

    private static long subscriberThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("lockstep-redlock-notify-"))
                .count();
    }
}
