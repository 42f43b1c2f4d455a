package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.tck.Timing;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The lock-api runtime against real, stalled redis-servers: user callbacks cannot stall another
 * server's leases, and failing closed has a time bound (review of 2026-11-22, findings 3 and 6).
 */
@DisplayName("lock-redis: runtime bounds against a stalled server")
class RedisRuntimeBoundsTest {

    private final Timing timing = Timing.fromSystemProperty();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (Exception ignored) {
                // keep closing the rest
            }
        }
    }

    private RedisServer server() {
        RedisServer server = RedisServer.start();
        toClose.add(server);
        return server;
    }

    private LockProvider open(RedisServer server, String settings, LockRuntime runtime) {
        LockProvider provider =
                Locks.open(LockConfig.of(server.uri() + settings).withRuntime(runtime));
        toClose.add(provider);
        return provider;
    }

    @Test
    @DisplayName("lost() callbacks that block on a paused server's leases do not stop a healthy server's renewals")
    void blockingCallbacksDoNotStallAnotherServer() throws Exception {
        RedisServer x = server();
        RedisServer y = server();
        LockRuntime runtime = LockRuntime.defaults();
        LockProvider onX = open(x, "?timeout=300ms", runtime);
        LockProvider onY = open(y, "?timeout=300ms", runtime);
        Duration ttl = timing.millis(1_000);
        LeaseOptions renewed = LeaseOptions.of(ttl).withAutoRenew();
        CountDownLatch unblock = new CountDownLatch(1);
        toClose.add(unblock::countDown);
        AtomicInteger blocked = new AtomicInteger();
        List<Lease> onPaused = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Lease lease = onX.acquire("a" + i, renewed);
            lease.lost().thenRun(() -> {
                blocked.incrementAndGet();
                try {
                    unblock.await(30, TimeUnit.SECONDS); // a callback that blocks
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            onPaused.add(lease);
        }
        Lease healthy = onY.acquire("b", renewed);
        x.pause();
        try {
            long start = System.nanoTime();
            while (System.nanoTime() - start < ttl.multipliedBy(4).toNanos()) {
                assertThat(healthy.isValid())
                        .as("lease on the healthy server after %d ms", (System.nanoTime() - start) / 1_000_000)
                        .isTrue();
                Thread.sleep(ttl.toMillis() / 10);
            }
            for (Lease lease : onPaused) {
                assertThat(lease.lost().toCompletableFuture().get(5, TimeUnit.SECONDS))
                        .isEqualTo(LossReason.RENEWAL_FAILED);
            }
            assertThat(blocked.get()).as("callbacks blocking").isPositive();
            assertThat(healthy.lost().toCompletableFuture()).isNotDone();
            assertThat(healthy.release()).isTrue();
        } finally {
            unblock.countDown();
            x.resume();
        }
    }

    @Test
    @DisplayName(
            "60 leases renewing one by one on a paused server hold at most backendConcurrency threads; a healthy server keeps renewing")
    void aPausedServerDoesNotGrowRenewalThreads() throws Exception {
        RedisServer x = server();
        RedisServer y = server();
        // No batch window: every renewal is its own task, as for a backend that cannot batch.
        LockRuntime runtime =
                LockRuntime.builder().renewalBatchWindow(Duration.ZERO).build();
        LockProvider onX = open(x, "?timeout=300ms&poolSize=64", runtime);
        LockProvider onY = open(y, "?timeout=300ms", runtime);
        Duration ttl = timing.millis(1_000);
        LeaseOptions renewed = LeaseOptions.of(ttl).withAutoRenew();
        List<Lease> onPaused = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            onPaused.add(onX.acquire("s" + i, renewed));
        }
        Lease healthy = onY.acquire("h", renewed);
        x.pause();
        try {
            int peakBlocked = 0;
            long start = System.nanoTime();
            while (System.nanoTime() - start < ttl.multipliedBy(3).toNanos()) {
                assertThat(healthy.isValid())
                        .as("lease on the healthy server after %d ms", (System.nanoTime() - start) / 1_000_000)
                        .isTrue();
                peakBlocked = Math.max(peakBlocked, renewalThreadsReadingFromSocket());
                Thread.sleep(ttl.toMillis() / 20);
            }
            for (Lease lease : onPaused) {
                assertThat(lease.lost().toCompletableFuture().get(5, TimeUnit.SECONDS))
                        .isEqualTo(LossReason.RENEWAL_FAILED);
            }
            // A thread per renewal (the cached pool before issue 12) had 60 here. A stack does not say which
            // server a read waits on, so the count also takes in the healthy lease's renewal if a sample
            // catches it mid-read (R7 of stop 37, under load: 5). That provider has one lease, so one renewal
            // in flight at most: the paused server's lane holds at most backendConcurrency, plus that one.
            assertThat(peakBlocked)
                    .as(
                            "renewal threads in a socket read at once: the paused server's, plus at most the healthy lease's one")
                    .isBetween(1, runtime.backendConcurrency() + 1);
            assertThat(renewalThreads())
                    .as("renewal threads alive")
                    .isLessThanOrEqualTo(LockRuntime.DEFAULT_RENEWAL_THREADS);
            assertThat(healthy.lost().toCompletableFuture()).isNotDone();
            assertThat(healthy.release()).isTrue();
        } finally {
            x.resume();
        }
    }

    private static int renewalThreads() {
        int count = 0;
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.getName().startsWith("lockstep-renewal-")) {
                count++;
            }
        }
        return count;
    }

    /** Renewal threads whose stack shows a socket read: waiting on a server's answer. */
    private static int renewalThreadsReadingFromSocket() {
        int count = 0;
        for (var entry : Thread.getAllStackTraces().entrySet()) {
            if (!entry.getKey().getName().startsWith("lockstep-renewal-")) {
                continue;
            }
            for (StackTraceElement frame : entry.getValue()) {
                if (frame.getMethodName().startsWith("read")
                        && frame.getClassName().contains("Socket")) {
                    count++;
                    break;
                }
            }
        }
        return count;
    }

    @Test
    @DisplayName("close() of a provider holding five leases on a paused server returns within its close timeout")
    void closeIsBoundedOnAPausedServer() throws Exception {
        RedisServer server = server();
        Duration closeTimeout = timing.millis(1_000);
        LockProvider provider = open(
                server,
                "?timeout=500ms",
                LockRuntime.builder().closeTimeout(closeTimeout).build());
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            leases.add(provider.acquire("c" + i, LeaseOptions.of(Duration.ofSeconds(30))));
        }
        server.pause();
        try {
            long start = System.nanoTime();
            provider.close();
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            // Sequential releases with retries took 5 x 3 socket timeouts here.
            assertThat(took).isLessThan(closeTimeout.plus(timing.millis(1_000)));
            for (Lease lease : leases) {
                assertThat(lease.lost().toCompletableFuture().get(1, TimeUnit.SECONDS))
                        .isEqualTo(LossReason.RELEASED);
                assertThat(lease.isValid()).isFalse();
            }
        } finally {
            server.resume();
        }
    }

    @Test
    @DisplayName("tryAcquire with no wait against a paused server fails closed within one socket timeout")
    void zeroWaitTryAcquireIsBoundedOnAPausedServer() {
        RedisServer server = server();
        Duration socketTimeout = Duration.ofMillis(1_000);
        LockProvider provider = open(
                server,
                "?timeout=" + socketTimeout.toMillis() + "ms",
                LockRuntime.builder().retryWindow(Duration.ZERO).build());
        assertThat(provider.tryAcquire("warm", LeaseOptions.of(Duration.ofSeconds(5))))
                .isPresent();
        server.pause();
        try {
            long start = System.nanoTime();
            assertThatThrownBy(() -> provider.tryAcquire("p", LeaseOptions.of(Duration.ofSeconds(30))))
                    .isInstanceOf(BackendUnavailableException.class);
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            // Three attempts and the abandon, one socket timeout each, took four times this before.
            assertThat(took).isLessThan(socketTimeout.plus(timing.millis(800)));
        } finally {
            server.resume();
        }
    }
}
