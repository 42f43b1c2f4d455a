package io.lockstep.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.LockRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A lease's timer that fires before the call that made it has stored it: the thread that asked for
 * a far-off expiry check (or renewal) is descheduled between putting it on the {@link ExpiryWheel} and
 * storing it, the tick fires meanwhile, and the check asks for its successor. Storing the first timer
 * must not cancel the successor, or the lease is never judged expired (its {@code lost()} never
 * completes) or never renewed. The scheduler here plays the descheduled thread: it runs the wheel's
 * tick at once, on the calling thread, inside the call that schedules it.
 */
class LeaseTimersTest {

    private static final long FAR = TimeUnit.MILLISECONDS.toNanos(500);
    private static final long NEAR = TimeUnit.MILLISECONDS.toNanos(5);

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"expiry", "renewal"})
    @DisplayName("a timer that fires and asks for its successor before it is stored does not lose the successor")
    void successorOfATimerThatFiredEarlySurvives(String kind) {
        TickRunsAtOnce scheduler = new TickRunsAtOnce();
        LockRuntime runtime = LockRuntime.builder().scheduler(scheduler).build();
        LeaseTimers timers =
                new LeaseTimers(runtime, Runnable::run, new ExpiryWheel(runtime), "race", () -> true, () -> {});
        BiConsumer<Long, Runnable> ask = kind.equals("expiry") ? timers::expiryIn : timers::renewalIn;

        ask.accept(FAR, () -> ask.accept(NEAR, () -> {}));

        assertThat(scheduler.ranAtOnce).as("wheel ticks run inside schedule()").isEqualTo(1);
        assertThat(scheduler.timed).as("timers left on the scheduler").hasSize(1);
        assertThat(scheduler.timed.get(0).isCancelled())
                .as("the successor the fired %s timer asked for", kind)
                .isFalse();
    }

    /** Runs the first far-off task (the wheel's tick) inside {@code schedule}; records the rest. */
    private static final class TickRunsAtOnce extends DefaultLeaseLincheckTest.NeverRunningScheduler {
        int ranAtOnce;
        final List<Timed> timed = new ArrayList<>();

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            if (unit.toNanos(delay) >= TimeUnit.MILLISECONDS.toNanos(20) && ranAtOnce == 0) {
                ranAtOnce++;
                command.run();
                return new Timed(); // it has run: cancelling it does nothing
            }
            Timed future = new Timed();
            timed.add(future);
            return future;
        }
    }

    /** A timer that only remembers whether it was cancelled. */
    private static final class Timed implements ScheduledFuture<Object> {
        private boolean cancelled;

        @Override
        public long getDelay(TimeUnit unit) {
            return 0;
        }

        @Override
        public int compareTo(Delayed other) {
            return 0;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            cancelled = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return cancelled;
        }

        @Override
        public Object get() {
            return null;
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            return null;
        }
    }
}
