package io.lockstep.spi;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockRuntime;
import io.lockstep.LossReason;
import io.lockstep.metrics.LockMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Issue 12 item 3: an acquire + release costs no task on the shared scheduler (far-off expiry checks
 * share a tick) and none on the callback executor (nobody asked for {@code lost()}), while a lease
 * that is left to run out still expires and tells its observers on the callback executor; and
 * auto-renewed leases far from their next renewal share the same ticks rather than a scheduler task
 * each per round.
 */
@DisplayName("lock-api: the acquire + release hot path hands no work to other threads")
class HotPathSchedulingTest {

    private final AtomicInteger scheduled = new AtomicInteger();
    private final AtomicInteger callbacks = new AtomicInteger();
    private final CountingScheduler scheduler = new CountingScheduler();
    private final ExecutorService callbackExecutor = LockRuntime.newCallbackExecutor(1);
    private final BackendLockProvider<String> provider = new BackendLockProvider<>(
            new TestBackend(),
            LockRuntime.builder()
                    .scheduler(scheduler)
                    .callbackExecutor(task -> {
                        callbacks.incrementAndGet();
                        callbackExecutor.execute(task);
                    })
                    .build());

    @AfterEach
    void close() {
        provider.close();
        scheduler.shutdownNow();
        callbackExecutor.shutdownNow();
    }

    @Test
    @DisplayName("1,000 acquire + release cycles of 30 s leases: a handful of scheduler tasks, no callback task")
    void releasedLeasesScheduleAlmostNothing() {
        LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30));
        for (int i = 0; i < 1_000; i++) {
            Lease lease = provider.tryAcquire("hot", options).orElseThrow();
            assertThat(lease.release()).isTrue();
        }
        // One scheduler task per 10 ms tick the loop spanned, not one per lease.
        assertThat(scheduled.get()).as("scheduler tasks").isLessThan(1_000 / 4);
        assertThat(callbacks.get()).as("callback executor tasks").isZero();
    }

    @Test
    @DisplayName("a lease left to run out still expires, and its lost() stage completes on the callback executor")
    void anExpiringLeaseStillExpires() throws Exception {
        Lease lease = provider.tryAcquire("expiring", LeaseOptions.of(Duration.ofMillis(150)))
                .orElseThrow();
        String[] thread = new String[1];
        LossReason reason = lease.lost()
                .thenApply(r -> {
                    thread[0] = Thread.currentThread().getName();
                    return r;
                })
                .toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        assertThat(reason).isEqualTo(LossReason.EXPIRED);
        assertThat(lease.isValid()).isFalse();
        assertThat(thread[0]).as("the thread that ran the callback").startsWith("lockstep-callback");
        assertThat(lease.lost().toCompletableFuture().isDone())
                .as("lost() asked after the end")
                .isTrue();
    }

    @Test
    @DisplayName("1,000 auto-renewed leases over two renewal rounds: fewer scheduler tasks than leases, none lost")
    void renewalsAtScaleShareTicks() throws Exception {
        AtomicInteger renewed = new AtomicInteger();
        AtomicInteger lost = new AtomicInteger();
        TestBackend backend = new TestBackend();
        backend.renewalBatch = 500;
        try (BackendLockProvider<String> renewing = new BackendLockProvider<>(
                backend,
                LockRuntime.builder()
                        .scheduler(scheduler)
                        .metrics(new LockMetrics() {
                            @Override
                            public void renewed(String provider) {
                                renewed.incrementAndGet();
                            }

                            @Override
                            public void lost(String provider, LossReason reason) {
                                lost.incrementAndGet();
                            }
                        })
                        .build())) {
            // Renewed every 800 ms: a renewal round may run 1.6 s late on a starved machine before a lease lapses.
            LeaseOptions options = LeaseOptions.of(Duration.ofMillis(2_400)).withAutoRenew();
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                leases.add(renewing.tryAcquire("renewed-" + i, options).orElseThrow());
            }
            int tasksBefore = scheduled.get();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (renewed.get() < 2 * leases.size() && System.nanoTime() - deadline < 0) {
                Thread.sleep(10); // polling the renewal count, with a deadline
            }
            int tasks = scheduled.get() - tasksBefore;
            assertThat(renewed.get()).as("renewals").isGreaterThanOrEqualTo(2 * leases.size());
            assertThat(lost.get()).as("leases lost").isZero();
            assertThat(leases).allMatch(Lease::isValid);
            // Before, each renewal was a scheduler task of its own: 2,000 here. Now one per 10 ms tick
            // (and one per batch window).
            assertThat(tasks)
                    .as("scheduler tasks over %d renewals", renewed.get())
                    .isLessThan(leases.size());
            leases.forEach(Lease::release);
        }
    }

    /** The runtime's kind of scheduler, counting what is scheduled on it. */
    private final class CountingScheduler extends ScheduledThreadPoolExecutor {
        CountingScheduler() {
            super(1);
            setRemoveOnCancelPolicy(true);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            scheduled.incrementAndGet();
            return super.schedule(command, delay, unit);
        }
    }
}
