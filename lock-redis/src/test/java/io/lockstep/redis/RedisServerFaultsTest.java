package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("lock-redis under server faults")
class RedisServerFaultsTest {

    private RedisServer redis;
    private LockProvider locks;

    @BeforeEach
    void start() {
        redis = RedisServer.start();
        locks = Locks.open(redis.uri() + "?timeout=300ms");
    }

    @AfterEach
    void stop() {
        locks.close();
        redis.close();
    }

    @Test
    @DisplayName("a killed server fails acquire closed, naming host and port; after restart locks work again")
    void killedServerFailsClosed() {
        redis.kill();
        assertThatThrownBy(() -> locks.tryAcquire("k", LeaseOptions.of(Duration.ofSeconds(5))))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("127.0.0.1:" + redis.port())
                .hasMessageContaining("'k'");
        redis.restart();
        assertThat(locks.tryAcquire("k", LeaseOptions.of(Duration.ofSeconds(5))))
                .isPresent();
    }

    @Test
    @DisplayName("a paused server fails acquire closed within the timeout and grants nothing once it resumes")
    void pausedServerFailsClosed() {
        redis.pause();
        long start = System.nanoTime();
        try {
            assertThatThrownBy(() -> locks.tryAcquire("p", LeaseOptions.of(Duration.ofSeconds(30))))
                    .isInstanceOf(BackendUnavailableException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        } finally {
            redis.resume();
        }
        // The attempts the paused server queued ran when it resumed; the abandon after them must have
        // freed whatever they took, or the key will expire by its TTL. Either way nobody holds it for us.
        try (LockProvider other = Locks.open(redis.uri())) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(35);
            boolean free = false;
            while (!free && System.nanoTime() < deadline) {
                free = other.tryAcquire(
                                "p", LeaseOptions.of(Duration.ofSeconds(5)).withWaitTime(Duration.ofSeconds(1)))
                        .map(l -> {
                            l.release();
                            return true;
                        })
                        .orElse(false);
            }
            assertThat(free).as("lock free after the failed attempts").isTrue();
        }
    }

    @Test
    @DisplayName("a holder whose server is down loses its lease by the deadline: lost() says RENEWAL_FAILED")
    void holderLearnsOfLossByItsDeadline() throws Exception {
        Duration ttl = Duration.ofMillis(900);
        Lease lease = locks.acquire("h", LeaseOptions.of(ttl).withAutoRenew());
        long acquiredAt = System.nanoTime();
        redis.pause();
        try {
            LossReason reason = lease.lost().toCompletableFuture().get(5, TimeUnit.SECONDS);
            Duration after = Duration.ofNanos(System.nanoTime() - acquiredAt);
            assertThat(reason).isEqualTo(LossReason.RENEWAL_FAILED);
            // Validity is counted from the acquire request: the loss is known by the lease time, plus
            // at most one socket timeout for the renewal in flight and a scheduler tick.
            assertThat(after).isLessThan(ttl.plus(Duration.ofMillis(700)));
            assertThat(lease.isValid()).isFalse();
        } finally {
            redis.resume();
        }
    }

    @Test
    @DisplayName("waiters are woken by pub/sub again after the server restarted")
    void subscriptionRecoversAfterRestart() throws Exception {
        assertThat(locks.tryAcquire(
                        "warmup", LeaseOptions.of(Duration.ofSeconds(5)).withWaitTime(Duration.ofMillis(1))))
                .isPresent();
        redis.kill();
        redis.restart();
        Lease held = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (held == null && System.nanoTime() < deadline) {
            try {
                held = locks.tryAcquire("w", LeaseOptions.of(Duration.ofSeconds(30)))
                        .orElseThrow();
            } catch (BackendUnavailableException reconnecting) {
                Thread.sleep(20);
            }
        }
        assertThat(held).isNotNull();
        try (LockProvider other = Locks.open(redis.uri())) {
            CompletableFuture<Long> gotIt = CompletableFuture.supplyAsync(() -> {
                Lease lease = other.acquire(
                        "w", LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(20)));
                long at = System.nanoTime();
                lease.release();
                return at;
            });
            Thread.sleep(300);
            long releasedAt = System.nanoTime();
            held.release();
            // Held for 30 s: only a release notification (not the TTL poll, 29.7 s after the release)
            // wakes the waiter within 10 s; the bound leaves a loaded machine all the slack it needs.
            assertThat(Duration.ofNanos(gotIt.get(20, TimeUnit.SECONDS) - releasedAt))
                    .isLessThan(Duration.ofSeconds(10));
        }
    }
}
