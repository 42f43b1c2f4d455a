package io.lockstep.shedlock;

import static io.lockstep.shedlock.Waits.TIMING;
import static java.time.Duration.ZERO;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's own provider suite ({@code shedlock-test-support}'s {@link
 * AbstractExtensibleLockProviderIntegrationTest}) against {@link LockstepShedLockProvider} on one backend,
 * plus Lockstep's checks: fencing tokens for the task, names passed unchanged, and a history of clients
 * that never run the task twice at once.
 *
 * <p>Each test gets two clients of the backend: the adapter's and a probe that {@link #assertLocked} and
 * {@link #assertUnlocked} use, as another node would.
 */
abstract class ShedLockProviderContract extends AbstractExtensibleLockProviderIntegrationTest {

    private LockProvider locks;
    private LockProvider probe;
    private LockstepShedLockProvider shedLock;

    /** The started server of the test class. */
    protected abstract Backend backend();

    /** The lease mode under test. */
    protected LockstepShedLockOptions options() {
        return LockstepShedLockOptions.lockAtMostFor();
    }

    @BeforeEach
    void openClients() {
        locks = backend().newProvider();
        probe = backend().newProvider();
        shedLock = new LockstepShedLockProvider(locks, options());
    }

    @AfterEach
    void closeClients() {
        locks.close();
        probe.close();
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return shedLock;
    }

    /** Another client cannot take the lock now. */
    @Override
    protected void assertLocked(String lockName) {
        Optional<Lease> taken = probe.tryAcquire(lockName, LeaseOptions.of(ofSeconds(5)));
        taken.ifPresent(Lease::release);
        assertThat(taken)
                .as("another client took lock '%s', which should be held", lockName)
                .isEmpty();
    }

    /**
     * Another client can take the lock: waits for it (a release, or the provider's delete at expiry, is one
     * more round trip), then gives it back.
     */
    @Override
    protected void assertUnlocked(String lockName) {
        Waits.until("another client taking lock '" + lockName + "'", ofSeconds(10), () -> {
            Optional<Lease> taken = probe.tryAcquire(lockName, LeaseOptions.of(ofSeconds(5)));
            taken.ifPresent(Lease::release);
            return taken.isPresent();
        });
    }

    /*
     * ShedLock's timing tests, widened through the hooks ShedLock gives its own providers for it: the
     * expired lock is freed by the backend's delete (a round trip after expiry), not by a row's timestamp.
     */

    @Override
    @Test
    public void shouldTimeout() throws InterruptedException {
        doTestTimeout(TIMING.millis(500));
    }

    @Override
    @Test
    public void shouldLockAtLeastFor() throws InterruptedException {
        doTestShouldLockAtLeastFor((int) TIMING.millis(1_500).toMillis());
    }

    /**
     * ShedLock's test takes a 2 ms lock; Lockstep never hands out a lease with no validity left (on Redis a
     * 2 ms lease is all clock-drift allowance), so the same steps run on a 300 ms lock and wait for it to end.
     */
    @Override
    @Test
    public void shouldNotBeAbleToExtendExpiredLock() {
        Optional<SimpleLock> lock = getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofMillis(300), ZERO));
        assertThat(lock).isNotEmpty();
        Lease lease = LockstepShedLock.currentLease().orElseThrow();
        Waits.until("the 300 ms lease to end", ofSeconds(10), () -> !lease.isValid());

        Optional<SimpleLock> newLock = lock.get().extend(ofSeconds(10), ZERO);
        assertThat(newLock).isEmpty();
        assertUnlocked(LOCK_NAME1);
    }

    @Test
    @DisplayName("the task reads its lease and a fencing token that grows from run to run")
    void taskReadsItsLeaseAndFencingToken() throws Exception {
        // On a thread of its own, so that locks ShedLock's tests left held on this one do not show.
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            thread.submit(() -> {
                        runTwiceReadingTheLease();
                        return null;
                    })
                    .get(TIMING.millis(30_000).toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            thread.shutdownNow();
        }
    }

    private void runTwiceReadingTheLease() throws Exception {
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(shedLock);
        List<Long> fences = new ArrayList<>();
        for (int run = 0; run < 2; run++) {
            executor.executeWithLock(
                    (Runnable) () -> {
                        Lease lease = LockstepShedLock.currentLease().orElseThrow();
                        assertThat(lease.name()).isEqualTo(LOCK_NAME1);
                        assertThat(lease.isValid()).isTrue();
                        OptionalLong fence = LockstepShedLock.currentFencingToken();
                        assertThat(fence).isPresent();
                        fences.add(fence.getAsLong());
                    },
                    lockConfig(LOCK_NAME1));
            assertThat(LockstepShedLock.currentLease())
                    .as("no lease once the task ended")
                    .isEmpty();
        }
        assertThat(fences).hasSize(2);
        assertThat(fences.get(1)).isGreaterThan(fences.get(0));
    }

    @Test
    @DisplayName("a name Lockstep cannot take is refused with Lockstep's message, never hashed or truncated")
    void invalidNamesAreRefusedWithLockstepsMessage() {
        assertThatThrownBy(() -> shedLock.lock(lockConfig("job\nname")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lock name must not contain control characters");
        assertThatThrownBy(() -> shedLock.lock(lockConfig("j".repeat(257))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be at most 256 bytes of UTF-8, was 257 bytes");
    }

    @Test
    @DisplayName("names that differ only in case, a trailing space or their 256th byte are different locks")
    void namesArePassedUnchanged() {
        String longName = "n".repeat(255);
        List<String> names = List.of(
                "Job-" + LOCK_NAME1, "job-" + LOCK_NAME1, "job-" + LOCK_NAME1 + " ", longName + "a", longName + "b");
        List<SimpleLock> held = new ArrayList<>();
        for (String name : names) {
            Optional<SimpleLock> lock = shedLock.lock(lockConfig(name));
            assertThat(lock).as("lock '%s'", name).isPresent();
            held.add(lock.get());
        }
        held.forEach(SimpleLock::unlock);
    }

    @Test
    @DisplayName("three clients, two scheduler threads each: the task never runs twice at once (history check)")
    void taskNeverRunsTwiceAtOnceAcrossClients() throws Exception {
        History history = new History();
        String job = "history-" + LOCK_NAME1;
        AtomicInteger running = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger runs = new AtomicInteger();
        List<LockProvider> clients = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int c = 0; c < 3; c++) {
                LockProvider client = backend().newProvider();
                clients.add(client);
                LockingTaskExecutor executor =
                        new DefaultLockingTaskExecutor(new LockstepShedLockProvider(client, options()));
                for (int t = 0; t < 2; t++) {
                    History.Recorder recorder = history.client("client" + c + "-thread" + t);
                    workers.add(threads.submit(() -> {
                        for (int i = 0; i < 15; i++) {
                            runOnce(executor, recorder, job, running, overlaps, runs);
                        }
                        return null;
                    }));
                }
            }
            for (Future<?> worker : workers) {
                worker.get(TIMING.millis(60_000).toMillis(), TimeUnit.MILLISECONDS);
            }
        } finally {
            threads.shutdownNow();
            clients.forEach(LockProvider::close);
        }
        assertThat(overlaps).as("runs that found another run in progress").hasValue(0);
        assertThat(runs.get()).as("runs").isPositive();
        HistoryChecker.strict()
                .leftoverAllowance(TIMING.millis(500), ofSeconds(30))
                .check(history)
                .assertValid();
    }

    private static void runOnce(
            LockingTaskExecutor executor,
            History.Recorder recorder,
            String job,
            AtomicInteger running,
            AtomicInteger overlaps,
            AtomicInteger runs)
            throws Exception {
        recorder.invoke(Op.ACQUIRE, job);
        LockingTaskExecutor.TaskResult<Boolean> result;
        try {
            result = executor.executeWithLock(
                    () -> {
                        recorder.acquired(LockstepShedLock.currentLease().orElseThrow());
                        if (running.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        Thread.sleep(2);
                        running.decrementAndGet();
                        runs.incrementAndGet();
                        recorder.invoke(Op.RELEASE, job);
                        return true;
                    },
                    new LockConfiguration(Instant.now(), job, ofSeconds(30), ZERO));
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
        if (result.wasExecuted()) {
            recorder.ok(Op.RELEASE, job);
        } else {
            recorder.fail(Op.ACQUIRE, job);
        }
    }
}
