package io.lockstep.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.lists;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.LockTimeoutException;
import io.lockstep.tck.reference.BrokenProviders.Mutation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Stateful properties: random sequences of acquire, tryAcquire, extend, release and advancing time, run
 * against the reference provider on an injected clock and against a model of what a lock promises. Any
 * difference is a failure, shrunk by QuickTheories and then by deleting steps ({@link SequenceProperty})
 * to a short sequence that shows it, with the seed that reproduces it ({@code -DQT_SEED=...}).
 *
 * <p>The same property run against deliberately broken providers must find a counterexample: a model
 * that cannot tell a broken provider from a correct one checks nothing.
 */
class InMemoryProviderModelTest {

    private static final List<String> LOCKS = List.of("a", "a/b");
    private static final int CLIENTS = 2;
    private static final int TRIES = 200;

    sealed interface Step permits Skip, TryAcquire, Acquire, Extend, Release, Advance {}

    /**
     * Does nothing. It is the simplest step, so shrinking turns the steps a failure does not need into
     * skips (QuickTheories shrinks each drawn value towards its simplest, not by deleting list elements).
     */
    record Skip() implements Step {}

    /** tryAcquire with no wait. */
    record TryAcquire(int client, int lock, long leaseMillis) implements Step {}

    /** acquire with no wait: a lease, or LockTimeoutException. */
    record Acquire(int client, int lock, long leaseMillis) implements Step {}

    /** extend the n-th lease handed out so far (modulo their number). */
    record Extend(int lease, long leaseMillis) implements Step {}

    /** release the n-th lease handed out so far (modulo their number). */
    record Release(int lease) implements Step {}

    /** let time pass on the injected clock. */
    record Advance(long millis) implements Step {}

    /** The model of one lease: which lock, until when, whether released. */
    private static final class ModelLease {
        final Lease real;
        final int lock;
        long expiresAt;
        boolean released;

        ModelLease(Lease real, int lock, long expiresAt) {
            this.real = real;
            this.lock = lock;
            this.expiresAt = expiresAt;
        }
    }

    /** Sequences of up to 48 steps; QuickTheories shrinks a failing one towards fewer, simpler steps. */
    static Gen<List<Step>> steps() {
        Gen<Integer> client = Generate.range(0, CLIENTS - 1);
        Gen<Integer> lock = Generate.range(0, LOCKS.size() - 1);
        Gen<Long> lease = Generate.longRange(1, 50);
        Gen<Integer> index = Generate.range(0, 20);
        // The first alternative is what a drawn step shrinks to: a Skip.
        List<Gen<Step>> alternatives = List.of(
                Generate.constant((Step) new Skip()),
                client.zip(lock, lease, (c, l, t) -> (Step) new TryAcquire(c, l, t)),
                client.zip(lock, lease, (c, l, t) -> (Step) new Acquire(c, l, t)),
                index.zip(lease, (i, t) -> (Step) new Extend(i, t)),
                index.map(i -> (Step) new Release(i)),
                Generate.longRange(0, 60).map(m -> (Step) new Advance(m)));
        Gen<Step> step = Generate.range(0, alternatives.size() - 1).flatMap(alternatives::get);
        return lists().of(step).ofSizeBetween(0, 48);
    }

    @Test
    @DisplayName("the reference provider behaves like the model over 200 random sequences")
    void theReferenceProviderBehavesLikeTheModel() {
        SequenceProperty.check(
                TRIES,
                steps(),
                Skip.class::isInstance,
                InMemoryProviderModelTest::shiftBack,
                steps -> runAgainstModel(steps, store -> new InMemoryLockProvider(store, runtime(store))));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = Mutation.class,
            names = {
                "RELEASE_WITHOUT_OWNER_CHECK",
                "NO_EXPIRY",
                "REPEATING_FENCES",
                "LOST_NEVER_COMPLETES",
                "EXTEND_IGNORES_OWNERSHIP",
                "VALIDITY_LONGER_THAN_GRANTED"
            })
    @DisplayName("the same property finds a counterexample of at most four steps for a provider with one bug")
    void theModelCatchesABrokenProvider(Mutation mutation) {
        assertThatThrownBy(() -> SequenceProperty.check(
                        TRIES,
                        steps(),
                        Skip.class::isInstance,
                        InMemoryProviderModelTest::shiftBack,
                        steps -> runAgainstModel(
                                steps, store -> BrokenProviders.open(mutation, store, runtimeBuilder(store)))))
                .as("the model property against %s", mutation)
                .isInstanceOf(SequenceProperty.Falsified.class)
                .hasMessageContaining("Property falsified")
                .hasMessageContaining("Seed was")
                .satisfies(e -> assertThat(((SequenceProperty.Falsified) e).minimal())
                        .as("the minimal counterexample for %s; the property's report:%n%s", mutation, e.getMessage())
                        .isNotEmpty()
                        .hasSizeLessThanOrEqualTo(4));
    }

    @Test
    @DisplayName("deleting an acquire the failure does not need renumbers the leases later steps name")
    void deletionRenumbersLeases() {
        // Reported once by the test above (a random seed): the first acquire is not needed, but deleting
        // it alone makes Release[1] name the current holder, which hides the bug. The report had 1 ms
        // leases; here they are 1 s of the injected clock, because the runtime disposes of an expired
        // lease's handle one lease time after it notices the expiry, on real timers: with 1 ms a busy
        // machine let that happen before the late release, which then never reached the broken backend
        // and the sequence passed (seen once in a full run).
        List<Step> reported = List.of(
                new TryAcquire(0, 1, 1000),
                new TryAcquire(0, 0, 1000),
                new Advance(1000),
                new TryAcquire(0, 0, 1000),
                new Release(1));
        assertThatThrownBy(() -> SequenceProperty.check(
                        1,
                        Generate.constant(reported),
                        Skip.class::isInstance,
                        InMemoryProviderModelTest::shiftBack,
                        steps -> runAgainstModel(
                                steps,
                                store -> BrokenProviders.open(
                                        Mutation.RELEASE_WITHOUT_OWNER_CHECK, store, runtimeBuilder(store)))))
                .isInstanceOf(SequenceProperty.Falsified.class)
                .satisfies(e -> assertThat(((SequenceProperty.Falsified) e).minimal())
                        .isEqualTo(List.of(
                                new TryAcquire(0, 0, 1000),
                                new Advance(1000),
                                new TryAcquire(0, 0, 1000),
                                new Release(0))));
    }

    /** The step naming the lease handed out one before the one it names (for {@link SequenceProperty}). */
    static Step shiftBack(Step step) {
        if (step instanceof Extend s && s.lease() > 0) {
            return new Extend(s.lease() - 1, s.leaseMillis());
        }
        if (step instanceof Release s && s.lease() > 0) {
            return new Release(s.lease() - 1);
        }
        return step;
    }

    private static LockRuntime runtime(InMemoryLockStore store) {
        return runtimeBuilder(store).build();
    }

    /**
     * The store's clock, and lost() stages completed on the thread that ends the lease (a step or an
     * isValid() check of this test), so the model can check at once whether lost() completed. Nothing
     * is attached to lost() here; a production runtime keeps its callbacks on their own pool.
     */
    private static LockRuntime.Builder runtimeBuilder(InMemoryLockStore store) {
        return LockRuntime.builder().clock(store.clock()).scheduler(TIMERS).callbackExecutor(Runnable::run);
    }

    /** The runtime's timers in these tests: one daemon thread, so {@link #lostSignalled} can wait it out. */
    private static final ScheduledExecutorService TIMERS = LockRuntime.newScheduler(1);

    static void runAgainstModel(List<Step> steps, Function<InMemoryLockStore, LockProvider> open) {
        AtomicLong now = new AtomicLong(1_000_000_000L);
        InMemoryLockStore store = new InMemoryLockStore("model", now::get, Duration.ofMillis(50));
        List<LockProvider> clients = new ArrayList<>();
        try {
            for (int i = 0; i < CLIENTS; i++) {
                clients.add(open.apply(store));
            }
            run(steps, now, clients);
        } finally {
            clients.forEach(LockProvider::close);
        }
    }

    private static void run(List<Step> steps, AtomicLong now, List<LockProvider> clients) {
        List<ModelLease> leases = new ArrayList<>();
        Map<Integer, ModelLease> holder = new HashMap<>();
        long[] lastFence = new long[LOCKS.size()];

        for (Step step : steps) {
            long t = now.get();
            if (step instanceof TryAcquire s) {
                boolean free = isFree(holder.get(s.lock()), t);
                Optional<Lease> got = clients.get(s.client())
                        .tryAcquire(LOCKS.get(s.lock()), LeaseOptions.of(Duration.ofMillis(s.leaseMillis())));
                assertThat(got.isPresent())
                        .as("%s when the lock is %s", s, free ? "free" : "held")
                        .isEqualTo(free);
                got.ifPresent(l -> granted(l, s.lock(), s.leaseMillis(), t, leases, holder, lastFence));
            } else if (step instanceof Acquire s) {
                boolean free = isFree(holder.get(s.lock()), t);
                LeaseOptions options = LeaseOptions.of(Duration.ofMillis(s.leaseMillis()));
                LockProvider client = clients.get(s.client());
                if (free) {
                    granted(
                            client.acquire(LOCKS.get(s.lock()), options),
                            s.lock(),
                            s.leaseMillis(),
                            t,
                            leases,
                            holder,
                            lastFence);
                } else {
                    assertThatThrownBy(() -> client.acquire(LOCKS.get(s.lock()), options))
                            .as("%s when the lock is held", s)
                            .isInstanceOf(LockTimeoutException.class);
                }
            } else if (step instanceof Extend s) {
                if (leases.isEmpty()) {
                    continue;
                }
                ModelLease lease = leases.get(s.lease() % leases.size());
                if (lease.released) {
                    assertThatThrownBy(() -> lease.real.extend(Duration.ofMillis(s.leaseMillis())))
                            .isInstanceOf(IllegalStateException.class);
                    continue;
                }
                boolean held = holder.get(lease.lock) == lease && lease.expiresAt > t;
                assertThat(lease.real.extend(Duration.ofMillis(s.leaseMillis())))
                        .as("%s of a lease that is %s", s, held ? "held" : "lost")
                        .isEqualTo(held);
                if (held) {
                    lease.expiresAt = t + Duration.ofMillis(s.leaseMillis()).toNanos();
                }
            } else if (step instanceof Release s) {
                if (leases.isEmpty()) {
                    continue;
                }
                ModelLease lease = leases.get(s.lease() % leases.size());
                if (lease.released) {
                    assertThatThrownBy(lease.real::release).isInstanceOf(IllegalStateException.class);
                    continue;
                }
                boolean held = holder.get(lease.lock) == lease && lease.expiresAt > t;
                assertThat(lease.real.release())
                        .as("%s of a lease that is %s", s, held ? "held" : "lost")
                        .isEqualTo(held);
                lease.released = true;
                if (holder.get(lease.lock) == lease) {
                    holder.remove(lease.lock);
                }
            } else if (step instanceof Advance s) {
                now.addAndGet(Duration.ofMillis(s.millis()).toNanos());
            } else {
                continue; // Skip
            }
            // After every step, every lease agrees with the model about whether it is valid, for how
            // long, and whether its loss signal has fired.
            long after = now.get();
            for (ModelLease lease : leases) {
                boolean valid = !lease.released && holder.get(lease.lock) == lease && lease.expiresAt > after;
                assertThat(lease.real.isValid())
                        .as("validity of %s after %s", lease.real, step)
                        .isEqualTo(valid);
                assertThat(lease.real.remaining())
                        .as("remaining of %s after %s", lease.real, step)
                        .isEqualTo(valid ? Duration.ofNanos(lease.expiresAt - after) : Duration.ZERO);
                assertThat(lostSignalled(lease.real))
                        .as("lost() of %s completed after %s", lease.real, step)
                        .isEqualTo(!valid);
            }
        }
    }

    /**
     * Whether {@code lease.lost()} has completed. The runtime's expiry checks run on {@link #TIMERS}, a
     * single thread, on real timers: one can mark a lease lost (what {@code isValid()} then reports) and
     * be about to complete {@code lost()} when this looks. So a lease that is not valid but not yet
     * signalled waits for the timer thread to finish what it is running (a no-op queued behind it), then
     * looks again: the answer no longer depends on where that thread was, and a provider whose {@code
     * lost()} never completes is still caught at once.
     */
    private static boolean lostSignalled(Lease lease) {
        CompletableFuture<?> lost = lease.lost().toCompletableFuture();
        if (lost.isDone() || lease.isValid()) {
            return lost.isDone();
        }
        try {
            TIMERS.submit(() -> {}).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for the timer thread", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("the timer thread did not run a no-op within 30 s", e);
        }
        return lost.isDone();
    }

    private static boolean isFree(ModelLease current, long now) {
        return current == null || current.released || current.expiresAt <= now;
    }

    private static void granted(
            Lease lease,
            int lock,
            long leaseMillis,
            long now,
            List<ModelLease> leases,
            Map<Integer, ModelLease> holder,
            long[] lastFence) {
        long fence = lease.fencingToken().orElseThrow();
        assertThat(fence).as("fence of a new holder of %s", LOCKS.get(lock)).isGreaterThan(lastFence[lock]);
        lastFence[lock] = fence;
        ModelLease model =
                new ModelLease(lease, lock, now + Duration.ofMillis(leaseMillis).toNanos());
        leases.add(model);
        holder.put(lock, model);
    }
}
