package io.lockstep.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockRuntime;
import io.lockstep.LockTimeoutException;
import io.lockstep.LossReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** How a lease lives and ends: callbacks, registration, races with expiry, disposal, close, waiting. */
class LeaseLifecycleTest {

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final TestBackend backend = new TestBackend();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    private BackendLockProvider<String> provider(LockRuntime runtime) {
        BackendLockProvider<String> provider = new BackendLockProvider<>(backend, runtime);
        toClose.add(provider);
        return provider;
    }

    private ScheduledExecutorService scheduler(int threads) {
        ScheduledExecutorService scheduler = LockRuntime.newScheduler(threads);
        toClose.add(scheduler::shutdownNow);
        return scheduler;
    }

    private static LeaseOptions lease(long millis) {
        return LeaseOptions.of(Duration.ofMillis(millis));
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        await(what, Duration.ofSeconds(5), condition);
    }

    private static void await(String what, Duration bound, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waiting for: " + what).isNegative();
            Thread.sleep(2);
        }
    }

    @Nested
    @DisplayName("Callbacks")
    class Callbacks {
        @Test
        @DisplayName("a lost() callback that blocks delays neither another lease's renewal nor its expiry check")
        void blockingCallbackDoesNotStallRenewal() throws Exception {
            ExecutorService callbacks = LockRuntime.newCallbackExecutor(1);
            toClose.add(callbacks::shutdownNow);
            BackendLockProvider<String> provider = provider(LockRuntime.builder()
                    .scheduler(scheduler(1))
                    .callbackExecutor(callbacks)
                    .build());
            CountDownLatch unblock = new CountDownLatch(1);
            toClose.add(0, unblock::countDown);
            AtomicReference<String> callbackThread = new AtomicReference<>();
            // 1 s, so the callback is attached before the lease ends: a stage added to a lost() that is
            // already complete runs on the adding thread (here "main", as R20 once saw after a 100 ms lease).
            Lease expiring = provider.tryAcquire("expiring", lease(1_000)).orElseThrow();
            expiring.lost().thenRun(() -> {
                callbackThread.set(Thread.currentThread().getName());
                try {
                    unblock.await(120, TimeUnit.SECONDS); // a callback that blocks, as users' sometimes do
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            // Renewed at a third of 2 s: the renewal has more than a second of slack on a starved machine.
            Duration ttl = Duration.ofSeconds(2);
            Lease renewed = provider.tryAcquire("renewed", LeaseOptions.of(ttl).withAutoRenew())
                    .orElseThrow();
            // The callback thread is blocked from here on; the renewed lease must be renewed three times more.
            await("the expiring lease's lost() callback to start", () -> callbackThread.get() != null);
            int extendsBefore = backend.extendCalls.get();
            await(
                    "three renewals while the callback thread is blocked",
                    Duration.ofSeconds(60),
                    () -> backend.extendCalls.get() >= extendsBefore + 3 || !renewed.isValid());
            assertThat(unblock.getCount()).as("the callback still blocked").isOne();
            assertThat(renewed.isValid())
                    .as("renewed lease still valid after %d renewals", backend.extendCalls.get() - extendsBefore)
                    .isTrue();
            assertThat(callbackThread.get()).as("the blocked callback ran").startsWith("lockstep-callback");
            assertThat(renewed.lost().toCompletableFuture()).isNotDone();
            assertThat(backend.isHeldBy("renewed", renewed.ownerToken())).isTrue();
        }

        @Test
        @DisplayName("lost() stages run on the callback executor, whichever thread ended the lease")
        void stagesRunOnTheCallbackExecutor() throws Exception {
            BackendLockProvider<String> provider = provider(LockRuntime.defaults());
            List<CompletableFuture<String>> threads = new ArrayList<>();
            Lease released = provider.tryAcquire("released", lease(60_000)).orElseThrow();
            Lease expired = provider.tryAcquire("expired", lease(50)).orElseThrow();
            Lease taken =
                    provider.tryAcquire("taken", lease(300).withAutoRenew()).orElseThrow();
            for (Lease l : List.of(released, expired, taken)) {
                CompletableFuture<String> thread = new CompletableFuture<>();
                l.lost().thenRun(() -> thread.complete(Thread.currentThread().getName()));
                threads.add(thread);
            }
            released.release();
            backend.rejectExtends = true; // the renewal (on a renewal thread) learns the lock is gone
            for (CompletableFuture<String> thread : threads) {
                assertThat(thread.get(5, TimeUnit.SECONDS)).startsWith("lockstep-callback-");
            }
        }
    }

    @Test
    @DisplayName(
            "a grant that has already expired when it arrives never becomes a lease: it is given back and disposed of")
    void expiredAtGrantIsForgotten() throws Exception {
        ManualClock clock = new ManualClock();
        // Runs every task at once in the calling thread: the expiry check of an expired grant, and the
        // disposal after it, run inside start(), as a fast scheduler thread could run them.
        ScheduledThreadPoolExecutor inline = new ScheduledThreadPoolExecutor(1) {
            @Override
            public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
                command.run();
                return super.schedule(() -> {}, delay, unit);
            }
        };
        toClose.add(inline::shutdownNow);
        LockBackend<String> slow = new ForwardingBackend(backend) {
            @Override
            public Attempt<String> tryLock(AttemptContext attempt) {
                Attempt<String> result = super.tryLock(attempt);
                clock.advance(Duration.ofMillis(10)); // the reply came after the whole lease time
                return result;
            }
        };
        BackendLockProvider<String> provider = new BackendLockProvider<>(
                slow,
                LockRuntime.builder()
                        .clock(clock)
                        .scheduler(inline)
                        .renewalExecutor(Runnable::run)
                        .build());
        toClose.add(provider);
        // Not handed out as a lease that is lost already: given back to the backend (released and
        // disposed of), and the caller, who has no wait time left, is told why.
        assertThatThrownBy(() -> provider.tryAcquire("short", lease(1)))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("no validity left");
        assertThat(provider.liveLeases()).as("leases the provider still tracks").isZero();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (backend.disposals.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(backend.disposals).as("handles disposed of").hasSize(1);
        assertThat(backend.disposals.values().iterator().next().get()).isEqualTo(1);
    }

    @Test
    @DisplayName("an extension that comes back while expiry fires never leaves the lock extended under a lost lease")
    void extensionRacingExpiry() throws Exception {
        ManualClock clock = new ManualClock();
        BackendLockProvider<String> provider = provider(
                LockRuntime.builder().clock(clock).scheduler(scheduler(1)).build());
        Lease lease = provider.tryAcquire("race", lease(60_000)).orElseThrow();
        clock.advance(Duration.ofSeconds(50));
        CountDownLatch gate = new CountDownLatch(1);
        backend.extendGate = gate;
        CompletableFuture<Boolean> extended = CompletableFuture.supplyAsync(() -> lease.extend(Duration.ofSeconds(60)));
        assertThat(backend.extendEntered.await(5, TimeUnit.SECONDS)).isTrue();
        clock.advance(Duration.ofSeconds(20)); // past the old deadline, well before the new one
        // The expiry check reads the old deadline, then the clock; the extension lands in between.
        CompletableFuture<Boolean> checked = new CompletableFuture<>();
        Thread checker = new Thread(() -> checked.complete(lease.isValid()));
        clock.holdNextReadingOf(checker);
        checker.start();
        assertThat(clock.held.await(5, TimeUnit.SECONDS)).isTrue();
        gate.countDown();
        assertThat(extended.get(5, TimeUnit.SECONDS)).isTrue();
        clock.proceed.countDown();
        checked.get(5, TimeUnit.SECONDS);
        boolean lost = lease.lost().toCompletableFuture().isDone() || !lease.isValid();
        boolean heldOnBackend = backend.isHeldBy("race", lease.ownerToken());
        assertThat(lost && heldOnBackend)
                .as("lease lost=%s while the backend still holds it for us=%s", lost, heldOnBackend)
                .isFalse();
        assertThat(lease.isValid())
                .as("the extension landed before expiry judged")
                .isTrue();
    }

    @Nested
    @DisplayName("Disposal")
    class Disposal {
        private final BackendLockProvider<String> provider = provider(LockRuntime.defaults());

        @Test
        @DisplayName("dispose(handle) runs exactly once after a release, and release or close again adds none")
        void onRelease() {
            Lease lease = provider.tryAcquire("d-release", lease(60_000)).orElseThrow();
            assertThat(lease.release()).isTrue();
            lease.close();
            assertThat(backend.disposalsOf(lease)).isEqualTo(1);
        }

        @Test
        @DisplayName("dispose(handle) runs exactly once after expiry, and a release after the loss adds none")
        void onExpiry() throws Exception {
            Lease lease = provider.tryAcquire("d-expiry", lease(50)).orElseThrow();
            assertThat(lease.lost().toCompletableFuture().get(5, TimeUnit.SECONDS))
                    .isEqualTo(LossReason.EXPIRED);
            await("disposal", () -> backend.disposalsOf(lease) == 1);
            assertThat(lease.release()).isFalse();
            await("forgotten", () -> provider.liveLeases() == 0);
            assertThat(backend.disposalsOf(lease)).isEqualTo(1);
        }

        @Test
        @DisplayName("dispose(handle) runs exactly once when a renewal finds the lock gone (NOT_HELD)")
        void onNotHeld() throws Exception {
            Lease lease =
                    provider.tryAcquire("d-gone", lease(300).withAutoRenew()).orElseThrow();
            backend.rejectExtends = true;
            assertThat(lease.lost().toCompletableFuture().get(5, TimeUnit.SECONDS))
                    .isEqualTo(LossReason.NOT_HELD);
            await("forgotten", () -> provider.liveLeases() == 0);
            lease.close();
            assertThat(backend.disposalsOf(lease)).isEqualTo(1);
        }

        @Test
        @DisplayName("dispose(handle) runs exactly once when the backend signals the session is gone")
        void onBackendLoss() throws Exception {
            Lease lease = provider.tryAcquire("d-session", lease(60_000)).orElseThrow();
            backend.sessionLoss.complete(LossReason.SESSION_EXPIRED);
            assertThat(lease.lost().toCompletableFuture().get(5, TimeUnit.SECONDS))
                    .isEqualTo(LossReason.SESSION_EXPIRED);
            await("forgotten", () -> provider.liveLeases() == 0);
            lease.close();
            assertThat(backend.disposalsOf(lease)).isEqualTo(1);
        }

        @Test
        @DisplayName("dispose(handle) runs exactly once for each lease when the provider closes")
        void onProviderClose() throws Exception {
            Lease held = provider.tryAcquire("d-close-1", lease(60_000).withAutoRenew())
                    .orElseThrow();
            Lease lostFirst = provider.tryAcquire("d-close-2", lease(50)).orElseThrow();
            lostFirst.lost().toCompletableFuture().get(5, TimeUnit.SECONDS);
            provider.close();
            held.close();
            assertThat(provider.liveLeases()).isZero();
            assertThat(backend.disposalsOf(held)).isEqualTo(1);
            assertThat(backend.disposalsOf(lostFirst)).isEqualTo(1);
            assertThat(backend.isHeld("d-close-1")).isFalse();
        }
    }

    @Test
    @DisplayName(
            "close() releases leases in parallel (up to backendConcurrency), one attempt each, and returns within its timeout")
    void closeIsParallelAndBounded() throws Exception {
        Duration closeTimeout = Duration.ofMillis(300);
        BackendLockProvider<String> provider = new BackendLockProvider<>(
                backend,
                LockRuntime.builder()
                        .closeTimeout(closeTimeout)
                        .backendConcurrency(5)
                        .build());
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            leases.add(
                    provider.tryAcquire("c" + i, lease(60_000).withAutoRenew()).orElseThrow());
        }
        CountDownLatch stalled = new CountDownLatch(1);
        backend.releaseGate = stalled; // every release now hangs, as on a paused server
        try {
            CompletableFuture<Void> closing = CompletableFuture.runAsync(provider::close);
            closing.get(closeTimeout.toMillis() + 3_000, TimeUnit.MILLISECONDS);
            assertThat(backend.releaseCalls.get())
                    .as("releases started in parallel")
                    .isEqualTo(5);
            for (Lease lease : leases) {
                assertThat(lease.lost().toCompletableFuture().get(1, TimeUnit.SECONDS))
                        .isEqualTo(LossReason.RELEASED);
                assertThat(lease.isValid()).isFalse();
            }
        } finally {
            stalled.countDown();
        }
        await("all ended", () -> provider.liveLeases() == 0);
        assertThat(backend.releaseCalls.get()).as("one attempt each").isEqualTo(5);
        for (Lease lease : leases) {
            assertThat(backend.disposalsOf(lease)).isEqualTo(1);
            assertThat(backend.isHeld(lease.name())).isFalse();
        }
    }

    @Nested
    @DisplayName("Failed attempts")
    class FailedAttempts {
        @Test
        @DisplayName(
                "against a stalled backend, retries stop at the retry window and the abandon runs in the background")
        void retriesStopAtTheRetryWindow() throws Exception {
            BackendLockProvider<String> provider = provider(LockRuntime.builder()
                    .retryWindow(Duration.ZERO)
                    .retryBackoff(Duration.ofMillis(1))
                    .build());
            backend.stall = Duration.ofMillis(100);
            assertThatThrownBy(() -> provider.tryAcquire("stalled", lease(10_000)))
                    .isInstanceOf(BackendUnavailableException.class);
            assertThat(backend.tryLockCalls.get())
                    .as("attempts by a zero-wait tryAcquire")
                    .isEqualTo(1);
            await("abandon", () -> backend.abandonedContexts.size() == 1);
            AttemptContext abandoned = backend.abandonedContexts.get(0);
            assertThat(abandoned.name()).isEqualTo("stalled");
            assertThat(abandoned.attachment(String.class))
                    .as("abandon sees what the attempt attached")
                    .contains("session-of-" + abandoned.ownerToken());
        }

        @Test
        @DisplayName("fast transient failures are still retried within the retry window")
        void fastFailuresAreRetried() throws Exception {
            BackendLockProvider<String> provider = provider(
                    LockRuntime.builder().retryBackoff(Duration.ofMillis(1)).build());
            backend.transientFailuresLeft = 2;
            assertThat(provider.tryAcquire("hiccup", lease(10_000))).isPresent();
            assertThat(backend.tryLockCalls.get()).isEqualTo(3);
        }
    }

    @Nested
    @DisplayName("Releases that fail")
    class FailedReleases {
        @Test
        @DisplayName("a release retries transient failures past the counted attempts, within the retry window")
        void releaseRetriesThroughTheRetryWindow() {
            BackendLockProvider<String> provider = provider(LockRuntime.builder()
                    .retryAttempts(3)
                    .retryBackoff(Duration.ofMillis(1))
                    .retryWindow(Duration.ofSeconds(30))
                    .build());
            Lease lease = provider.tryAcquire("flaky-release", lease(60_000)).orElseThrow();
            backend.transientFailuresLeft = 6;
            assertThat(lease.release()).as("freed after the hiccups").isTrue();
            assertThat(backend.releaseCalls.get()).as("release attempts").isEqualTo(7);
            assertThat(backend.isHeld("flaky-release")).isFalse();
        }

        @Test
        @DisplayName("against a backend that stays down, a release ends after the retry window, having retried")
        void releaseGivesUpAfterTheRetryWindow() {
            BackendLockProvider<String> provider = provider(LockRuntime.builder()
                    .retryAttempts(3)
                    .retryBackoff(Duration.ofMillis(1))
                    .retryWindow(Duration.ofSeconds(2))
                    .build());
            Lease lease = provider.tryAcquire("down-release", lease(60_000)).orElseThrow();
            backend.down = true;
            assertThatThrownBy(lease::release)
                    .isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("unreachable");
            assertThat(backend.releaseCalls.get())
                    .as("attempts within two seconds, a millisecond's backoff doubling")
                    .isGreaterThan(3);
            assertThat(lease.isValid()).as("released locally").isFalse();
        }

        @Test
        @DisplayName("a permanent failure, or retries switched off, ends a release after one attempt")
        void noRetryWhenNotTransientOrSwitchedOff() {
            BackendLockProvider<String> retrying = provider(
                    LockRuntime.builder().retryWindow(Duration.ofSeconds(30)).build());
            Lease refused =
                    retrying.tryAcquire("refused-release", lease(60_000)).orElseThrow();
            backend.permanentFailure = true;
            assertThatThrownBy(refused::release).isInstanceOf(BackendUnavailableException.class);
            assertThat(backend.releaseCalls.get())
                    .as("attempts on a permanent failure")
                    .isEqualTo(1);

            backend.permanentFailure = false;
            BackendLockProvider<String> once = provider(LockRuntime.builder()
                    .retryAttempts(1)
                    .retryWindow(Duration.ofSeconds(30))
                    .build());
            Lease lease = once.tryAcquire("once-release", lease(60_000)).orElseThrow();
            backend.down = true;
            assertThatThrownBy(lease::release).isInstanceOf(BackendUnavailableException.class);
            assertThat(backend.releaseCalls.get())
                    .as("attempts with retries switched off")
                    .isEqualTo(2);
        }
    }

    @Nested
    @DisplayName("Server-side wait")
    class ServerSideWait {
        @Test
        @DisplayName("a backend that waits on the server is asked to wait, not watched or polled, and wakes on release")
        void waitsOnTheServer() throws Exception {
            backend.serverWait = true;
            BackendLockProvider<String> provider = provider(LockRuntime.defaults());
            Lease holder = provider.tryAcquire("sw", lease(10_000)).orElseThrow();
            Duration leaseTime = Duration.ofSeconds(2);
            AtomicBoolean released = new AtomicBoolean();
            CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
                Lease lease = provider.acquire("sw", LeaseOptions.of(leaseTime).withWaitTime(Duration.ofSeconds(5)));
                boolean afterRelease = released.get();
                lease.release();
                return afterRelease;
            });
            await("the waiter waits on the server", () -> backend.maxWaits.size() >= 2);
            released.set(true);
            holder.release();
            assertThat(waiter.get(5, TimeUnit.SECONDS))
                    .as("granted only after the release")
                    .isTrue();
            assertThat(backend.watches.get()).as("watches opened").isZero();
            assertThat(backend.maxWaits.subList(1, backend.maxWaits.size()))
                    .as("server-side waits asked for")
                    .allSatisfy(w -> assertThat(w).isPositive().isLessThanOrEqualTo(leaseTime.dividedBy(2)));
            assertThat(backend.tryLockCalls.get())
                    .as("calls: each waits up to a second on the server")
                    .isLessThan(10);
        }

        @Test
        @DisplayName("a server-side wait ends by the caller's wait time")
        void serverWaitEndsByTheWaitTime() throws Exception {
            backend.serverWait = true;
            BackendLockProvider<String> provider = provider(LockRuntime.defaults());
            provider.tryAcquire("sw2", lease(10_000)).orElseThrow();
            Duration wait = Duration.ofMillis(300);
            assertThatThrownBy(() -> provider.acquire("sw2", lease(10_000).withWaitTime(wait)))
                    .isInstanceOf(LockTimeoutException.class);
            assertThat(backend.maxWaits.subList(1, backend.maxWaits.size()))
                    .isNotEmpty()
                    .allSatisfy(w -> assertThat(w).isLessThanOrEqualTo(wait));
        }
    }

    /** Forwards every operation to another backend. */
    private static class ForwardingBackend implements LockBackend<String> {
        private final TestBackend delegate;

        ForwardingBackend(TestBackend delegate) {
            this.delegate = delegate;
        }

        @Override
        public io.lockstep.ProviderInfo info() {
            return delegate.info();
        }

        @Override
        public Attempt<String> tryLock(AttemptContext attempt) {
            return delegate.tryLock(attempt);
        }

        @Override
        public java.util.Optional<Duration> extend(String handle, Duration leaseTime) {
            return delegate.extend(handle, leaseTime);
        }

        @Override
        public boolean release(String handle) {
            return delegate.release(handle);
        }

        @Override
        public void dispose(String handle) {
            delegate.dispose(handle);
        }

        @Override
        public String describe() {
            return delegate.describe();
        }

        @Override
        public void close() {}
    }
}
