package io.lockstep.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockRuntime;
import io.lockstep.LockTimeoutException;
import io.lockstep.LossReason;
import io.lockstep.metrics.MicrometerLockMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class BackendLockProviderTest {

    private final TestBackend backend = new TestBackend();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final BackendLockProvider<String> provider = new BackendLockProvider<>(
            backend,
            LockRuntime.builder()
                    .metrics(new MicrometerLockMetrics(registry))
                    .retryBackoff(Duration.ofMillis(1))
                    .build());

    private static LeaseOptions lease(long millis) {
        return LeaseOptions.of(Duration.ofMillis(millis));
    }

    @Test
    @DisplayName("the backend is told who acquires: this process's host and pid and the label of the options")
    void theBackendIsToldTheHolder() {
        assertThat(provider.tryAcquire("labelled", lease(10_000).withLabel("nightly")))
                .isPresent();
        assertThat(backend.lastHolder).isEqualTo(io.lockstep.Holder.thisProcess("nightly"));
        assertThat(provider.tryAcquire("unlabelled", lease(10_000))).isPresent();
        assertThat(backend.lastHolder).isEqualTo(io.lockstep.Holder.thisProcess(null));
    }

    @Test
    @DisplayName("transient backend errors are retried and the acquire succeeds")
    void transientErrorsAreRetried() {
        backend.transientFailuresLeft = 2;
        assertThat(provider.tryAcquire("a", lease(10_000))).isPresent();
        assertThat(backend.tryLockCalls.get()).isEqualTo(3);
    }

    @Test
    @DisplayName("a backend that stays down fails closed and leaves nothing behind")
    void downBackendFailsClosed() {
        backend.down = true;
        assertThatThrownBy(() -> provider.acquire("a", lease(10_000).withWaitTime(Duration.ofSeconds(1))))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("test:1");
        assertThat(backend.tryLockCalls.get()).isEqualTo(3);
        // The abandon runs in the background so that the caller's bound does not include it.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (backend.abandoned.get() == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(backend.abandoned.get()).isEqualTo(1);
        backend.down = false;
        assertThat(backend.isHeld("a")).isFalse();
    }

    @Test
    @DisplayName("a permanent error is not retried")
    void permanentErrorsAreNotRetried() {
        backend.permanentFailure = true;
        assertThatThrownBy(() -> provider.tryAcquire("a", lease(10_000)))
                .isInstanceOf(BackendUnavailableException.class);
        assertThat(backend.tryLockCalls.get()).isEqualTo(1);
    }

    @Test
    @DisplayName("validity counts from when the request was sent, so a slow grant shortens it")
    void validityCountsFromTheRequest() {
        backend.grantDelay = Duration.ofMillis(200);
        Lease lease = provider.tryAcquire("slow", lease(1_000)).orElseThrow();
        assertThat(lease.remaining()).isLessThanOrEqualTo(Duration.ofMillis(800));
    }

    @Test
    @DisplayName(
            "a grant that arrives with no validity left is given back, never handed out; a waiter asks again within its wait time")
    void grantWithNoValidityLeftIsGivenBack() throws Exception {
        // The grant takes three times its lease time to arrive (a leader election, a stalled connection).
        backend.grantDelay = Duration.ofMillis(300);
        backend.delayedGrantsLeft = 1;
        assertThatThrownBy(() -> provider.tryAcquire("spent", lease(100)))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("no validity left");
        awaitDisposals(1);
        assertThat(backend.releaseCalls.get())
                .as("the spent grant was released")
                .isEqualTo(1);
        assertThat(backend.isHeld("spent")).isFalse();

        backend.delayedGrantsLeft = 1;
        Lease lease = provider.acquire("spent-waiting", lease(100).withWaitTime(Duration.ofSeconds(30)));
        awaitDisposals(2);
        assertThat(backend.tryLockCalls.get()).as("the waiter asked again").isGreaterThanOrEqualTo(3);
        assertThat(backend.disposalsOf(lease))
                .as("the lease handed out is not the spent one")
                .isZero();
        lease.close();
    }

    private void awaitDisposals(int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (backend.disposals.size() < count && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(backend.disposals).as("spent grants disposed of").hasSize(count);
    }

    @Test
    @DisplayName(
            "renewal failing until the deadline completes lost() with RENEWAL_FAILED by that deadline and never re-acquires")
    void renewalFailureLosesTheLease() throws Exception {
        Lease lease = provider.tryAcquire("r", lease(300).withAutoRenew()).orElseThrow();
        long start = System.nanoTime();
        backend.down = true;
        LossReason reason = lease.lost().toCompletableFuture().get(2, TimeUnit.SECONDS);
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(reason).isEqualTo(LossReason.RENEWAL_FAILED);
        assertThat(tookMillis).isLessThan(1_000);
        assertThat(lease.isValid()).isFalse();
        backend.down = false;
        int callsBefore = backend.tryLockCalls.get();
        assertThat(lease.extend(Duration.ofSeconds(1))).isFalse();
        assertThat(backend.tryLockCalls.get()).as("no re-acquire after loss").isEqualTo(callsBefore);
        assertThat(registry.counter("lockstep.renewal.failures", "provider", "test")
                        .count())
                .isPositive();
        assertThat(registry.counter("lockstep.losses", "provider", "test", "reason", "RENEWAL_FAILED")
                        .count())
                .isEqualTo(1);
    }

    @Test
    @DisplayName("a renewal the backend rejects completes lost() with NOT_HELD")
    void rejectedRenewal() throws Exception {
        Lease lease = provider.tryAcquire("n", lease(300).withAutoRenew()).orElseThrow();
        backend.rejectExtends = true;
        assertThat(lease.lost().toCompletableFuture().get(2, TimeUnit.SECONDS)).isEqualTo(LossReason.NOT_HELD);
    }

    @Test
    @DisplayName("a backend's own loss signal (a session expiring) ends the lease at once")
    void backendLossSignal() throws Exception {
        Lease lease = provider.tryAcquire("s", lease(60_000)).orElseThrow();
        backend.sessionLoss.complete(LossReason.SESSION_EXPIRED);
        assertThat(lease.lost().toCompletableFuture().get(1, TimeUnit.SECONDS)).isEqualTo(LossReason.SESSION_EXPIRED);
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    @DisplayName("metrics count attempts, successes, timeouts, renewals and hold time")
    void metricsAreCounted() throws Exception {
        // 3 s, renewed at a third: the waiter's 200 ms never outlasts it, however late a renewal runs.
        Lease lease = provider.tryAcquire("m", lease(3_000).withAutoRenew()).orElseThrow();
        assertThatThrownBy(() -> provider.acquire("m", lease(150).withWaitTime(Duration.ofMillis(200))))
                .isInstanceOf(LockTimeoutException.class);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (registry.counter("lockstep.renewals", "provider", "test").count() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        lease.release();
        assertThat(registry.counter("lockstep.acquire.attempts", "provider", "test")
                        .count())
                .isEqualTo(2);
        assertThat(registry.counter("lockstep.acquire.successes", "provider", "test")
                        .count())
                .isEqualTo(1);
        assertThat(registry.counter("lockstep.acquire.timeouts", "provider", "test")
                        .count())
                .isEqualTo(1);
        assertThat(registry.counter("lockstep.renewals", "provider", "test").count())
                .isPositive();
        assertThat(registry.timer("lockstep.hold", "provider", "test").count()).isEqualTo(1);
        assertThat(registry.timer("lockstep.acquire.wait", "provider", "test").count())
                .isEqualTo(2);
    }

    @Test
    @DisplayName("closing the provider releases its leases, completes their lost() and stops renewal")
    void closeReleasesLeases() throws Exception {
        Lease renewed = provider.tryAcquire("c1", lease(300).withAutoRenew()).orElseThrow();
        Lease plain = provider.tryAcquire("c2", lease(60_000)).orElseThrow();
        plain.release();
        provider.close();
        assertThat(renewed.lost().toCompletableFuture().get(1, TimeUnit.SECONDS))
                .isEqualTo(LossReason.RELEASED);
        assertThat(backend.isHeld("c1")).isFalse();
        assertThat(renewed.isValid()).isFalse();
    }

    @Test
    @DisplayName("a closed provider refuses new work")
    void closedProvider() {
        provider.close();
        assertThatThrownBy(() -> provider.tryAcquire("x", lease(1_000)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }
}
