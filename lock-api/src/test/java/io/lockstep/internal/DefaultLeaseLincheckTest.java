package io.lockstep.internal;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Capability;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockRuntime;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.Grant;
import io.lockstep.spi.LockBackend;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import kotlin.Unit;
import kotlin.reflect.KFunction;
import kotlin.reflect.jvm.ReflectJvmMapping;
import org.jetbrains.lincheck.LincheckAssertionError;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Linearizability of the lease state machine ({@link DefaultLease}: HELD → LOST or RELEASED, never
 * back): Lincheck's model checker calls release, extend, isValid and remaining from two threads while
 * time passes on an injected clock, and requires every outcome to match some sequential order of the
 * same calls; after each scenario a lease that has ended must have completed lost(), and a valid one
 * must not have. The backend is a one-lock table on the same clock; the scheduler never runs a task,
 * so expiry is seen only through the lease's own checks and the interleavings stay Lincheck's. Besides
 * the generated scenarios, every check explores two concurrent releases. The same check must fail for
 * a lease whose release tests the state and sets it in two steps.
 */
@Tag("lincheck") // run by the module's "lincheck" surefire execution, in a JVM of its own (parent pom)
public class DefaultLeaseLincheckTest {

    private static final Duration LEASE = Duration.ofMillis(10);

    @Test
    @DisplayName("every concurrent history of release, extend, isValid, remaining and time passing is linearizable")
    void leaseStateMachineIsLinearizable() {
        options().check(LeaseOperations.class);
    }

    @Test
    @DisplayName("the same check finds the race in a lease whose release tests its state and sets it in two steps")
    void testThenSetReleaseIsCaught() {
        assertThatThrownBy(() -> options().check(TestThenSetRelease.class))
                .isInstanceOf(LincheckAssertionError.class)
                .hasMessageContaining("Invalid execution results")
                .hasMessageContaining("release()");
    }

    private static ModelCheckingOptions options() {
        KFunction<?> release = operation("release");
        return new ModelCheckingOptions()
                .iterations(20)
                .invocationsPerIteration(500)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .addCustomScenario(scenario -> {
                    scenario.parallel(threads -> {
                        threads.thread(t -> {
                            t.actor(release);
                            return Unit.INSTANCE;
                        });
                        threads.thread(t -> {
                            t.actor(release);
                            return Unit.INSTANCE;
                        });
                        return Unit.INSTANCE;
                    });
                    return Unit.INSTANCE;
                });
    }

    private static KFunction<?> operation(String name, Class<?>... parameterTypes) {
        try {
            return Objects.requireNonNull(
                    ReflectJvmMapping.getKotlinFunction(LeaseOperations.class.getMethod(name, parameterTypes)));
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
    }

    /** The operations Lincheck calls: one lease on a one-lock backend, created fresh for each scenario. */
    @Param(name = "millis", gen = IntGen.class, conf = "5:20")
    public static class LeaseOperations {

        final AtomicLong now = new AtomicLong(1_000_000_000L);
        final OneLockBackend backend = new OneLockBackend(now);
        final Lease lease = newLease();

        Lease newLease() {
            LockRuntime runtime = LockRuntime.builder()
                    .clock(now::get)
                    .scheduler(new NeverRunningScheduler())
                    .renewalExecutor(Runnable::run)
                    .callbackExecutor(Runnable::run)
                    .retryAttempts(1)
                    .build();
            Grant<String> grant = backend.tryLock("a", "owner", LEASE).grant();
            BackendCalls calls = new BackendCalls("lincheck", runtime);
            DefaultLease<String> created = DefaultLease.create(
                    new RenewalBatcher<>(backend, calls, runtime, runtime.renewalExecutor()),
                    "a",
                    "owner",
                    grant,
                    LeaseOptions.of(LEASE),
                    now.get(),
                    l -> {});
            created.start();
            return created;
        }

        /**
         * "released" or the exception's simple name. Not release()'s boolean: that is the backend's
         * answer, asked after the lease is marked released, and the backend's lock may run out in
         * between; the lease and the backend are two objects, not one linearizable state.
         */
        @Operation
        public String release() {
            try {
                lease.release();
                return "released";
            } catch (IllegalStateException e) {
                return e.getClass().getSimpleName();
            }
        }

        @Operation
        public String extend(@Param(name = "millis") int millis) {
            try {
                return Boolean.toString(lease.extend(Duration.ofMillis(millis)));
            } catch (IllegalStateException e) {
                return e.getClass().getSimpleName();
            }
        }

        @Operation
        public boolean isValid() {
            return lease.isValid();
        }

        @Operation
        public long remainingNanos() {
            return lease.remaining().toNanos();
        }

        /**
         * lost() completes after the state has changed (it is a notification, not part of the state), so it
         * is not an operation here; after every scenario, a lease that is no longer valid must have
         * completed it, and a valid one must not have.
         */
        @Validate
        public void lostCompletesOnceTheLeaseHasEnded() {
            boolean valid = lease.isValid();
            boolean done = lease.lost().toCompletableFuture().isDone();
            if (valid == done) {
                throw new IllegalStateException("lease valid=" + valid + " but lost() done=" + done);
            }
        }

        // Not an operation: whether the backend still holds the lock. A release marks the lease released
        // before it asks the backend (and an extend asks the backend before it moves the deadline), so
        // the lease and the backend are two objects, not one linearizable state.

        @Operation
        public void timePasses(@Param(name = "millis") int millis) {
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
        }
    }

    /** A lease broken on purpose: release checks "not yet released" and marks it in a separate step. */
    public static class TestThenSetRelease extends LeaseOperations {
        private volatile boolean released;

        @Override
        @Operation
        public String release() {
            if (released) {
                return IllegalStateException.class.getSimpleName();
            }
            backend.releaseFor("owner");
            released = true;
            return "released";
        }
    }

    /** One lock on the injected clock: owner, expiry; every operation atomic. */
    static final class OneLockBackend implements LockBackend<String> {
        private final AtomicLong now;
        private String owner;
        private long expiresAt;
        private long fence;

        OneLockBackend(AtomicLong now) {
            this.now = now;
        }

        synchronized boolean holds(String who) {
            return who.equals(owner) && expiresAt - now.get() > 0;
        }

        synchronized boolean releaseFor(String who) {
            if (!holds(who)) {
                return false;
            }
            owner = null;
            return true;
        }

        @Override
        public ProviderInfo info() {
            return new ProviderInfo(
                    "one-lock", StrengthTier.BEST_EFFORT, EnumSet.of(Capability.LEASE_EXPIRY, Capability.EXTEND));
        }

        @Override
        public synchronized Attempt<String> tryLock(String name, String ownerToken, Duration leaseTime) {
            if (owner != null && expiresAt - now.get() > 0 && !owner.equals(ownerToken)) {
                return Attempt.busy(Duration.ofNanos(expiresAt - now.get()));
            }
            owner = ownerToken;
            expiresAt = now.get() + leaseTime.toNanos();
            return Attempt.granted(Grant.of(ownerToken, OptionalLong.of(++fence), leaseTime));
        }

        @Override
        public synchronized Optional<Duration> extend(String handle, Duration leaseTime) {
            if (!holds(handle)) {
                return Optional.empty();
            }
            expiresAt = now.get() + leaseTime.toNanos();
            return Optional.of(leaseTime);
        }

        @Override
        public boolean release(String handle) {
            return releaseFor(handle);
        }

        @Override
        public synchronized void abandon(String name, String ownerToken) {
            if (ownerToken.equals(owner)) {
                owner = null;
            }
        }

        @Override
        public String describe() {
            return "one-lock";
        }

        @Override
        public void close() {}
    }

    /**
     * Accepts every task and never runs one: expiry is then observed only through the lease's checks.
     * Other tests of this package extend it to run some tasks themselves.
     */
    static class NeverRunningScheduler extends AbstractExecutorService implements ScheduledExecutorService {
        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            return new NeverFuture<>();
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            return new NeverFuture<>();
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
            return new NeverFuture<>();
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(
                Runnable command, long initialDelay, long delay, TimeUnit unit) {
            return new NeverFuture<>();
        }

        @Override
        public void shutdown() {}

        @Override
        public List<Runnable> shutdownNow() {
            return List.of();
        }

        @Override
        public boolean isShutdown() {
            return false;
        }

        @Override
        public boolean isTerminated() {
            return false;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return false;
        }

        @Override
        public void execute(Runnable command) {}
    }

    private static final class NeverFuture<V> implements ScheduledFuture<V> {
        @Override
        public long getDelay(TimeUnit unit) {
            return Long.MAX_VALUE;
        }

        @Override
        public int compareTo(Delayed other) {
            return 0;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return true;
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public boolean isDone() {
            return false;
        }

        @Override
        public V get() {
            throw new UnsupportedOperationException("never runs");
        }

        @Override
        public V get(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException("never runs");
        }
    }
}
