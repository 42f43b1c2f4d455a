package io.lockstep.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.LockRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A lease's timer ({@link LeaseTimer}: its expiry check or its renewal), timed again and again as one
 * object. A timer that fires before the call that made it has stored it (here a scheduler that runs the
 * wheel's tick at once, on the calling thread, inside the call that schedules it) and asks for its
 * successor must not lose the successor, or the lease is never judged expired (its {@code lost()}
 * never completes) or never renewed. A timer timed again into the tick it is already in stays in it,
 * once; timed into another tick, it leaves the first.
 */
class LeaseTimerTest {

    private static final long FAR = TimeUnit.MILLISECONDS.toNanos(500);
    private static final long NEAR = TimeUnit.MILLISECONDS.toNanos(5);

    @Test
    @DisplayName("a timer that fires and asks for its successor before it is stored does not lose the successor")
    void successorOfATimerThatFiredEarlySurvives() {
        TickRunsAtOnce scheduler = new TickRunsAtOnce();
        LockRuntime runtime = LockRuntime.builder().scheduler(scheduler).build();
        CountingTimer timer = new CountingTimer(runtime, scheduler);
        timer.onFire = () -> timer.in(NEAR);

        timer.in(FAR);

        assertThat(scheduler.ranAtOnce).as("wheel ticks run inside schedule()").isEqualTo(1);
        assertThat(timer.fired)
                .as("the far-off timer fired inside the call that timed it")
                .isEqualTo(1);
        assertThat(scheduler.timed).as("timers left on the scheduler").hasSize(1);
        assertThat(scheduler.timed.get(0).isCancelled())
                .as("the successor the fired timer asked for")
                .isFalse();
    }

    @Test
    @DisplayName(
            "a timer timed again into the tick it is already in fires once, and is not cancelled by the second timing")
    void timedTwiceIntoOneTickFiresOnce() {
        TicksOnDemand scheduler = new TicksOnDemand();
        LockRuntime runtime =
                LockRuntime.builder().clock(() -> 0L).scheduler(scheduler).build();
        CountingTimer timer = new CountingTimer(runtime, scheduler);

        timer.in(FAR);
        timer.in(FAR);
        scheduler.runAll();

        assertThat(scheduler.ticks).as("ticks scheduled").isEqualTo(1);
        assertThat(timer.fired)
                .as("runs of a timer timed twice for the same tick")
                .isEqualTo(1);
    }

    @Test
    @DisplayName("a timer timed again into a later tick leaves the earlier one, and a cancelled timer does not fire")
    void retimedTimerLeavesItsTick() {
        TicksOnDemand scheduler = new TicksOnDemand();
        LockRuntime runtime =
                LockRuntime.builder().clock(() -> 0L).scheduler(scheduler).build();
        CountingTimer timer = new CountingTimer(runtime, scheduler);

        timer.in(FAR);
        timer.in(2 * FAR);
        scheduler.runAll();

        assertThat(scheduler.ticks).as("ticks scheduled").isEqualTo(2);
        assertThat(timer.fired).as("runs of a timer moved to a later tick").isEqualTo(1);

        timer.in(FAR);
        timer.cancel();
        scheduler.runAll();

        assertThat(timer.fired).as("runs after the timer was cancelled").isEqualTo(1);
    }

    /** A timer that counts its runs and then runs {@link #onFire}, on a wheel of its own. */
    private static final class CountingTimer extends LeaseTimer {
        private final ExpiryWheel wheel;
        private final ScheduledExecutorService scheduler;
        int fired;
        Runnable onFire = () -> {};

        CountingTimer(LockRuntime runtime, ScheduledExecutorService scheduler) {
            this.wheel = new ExpiryWheel(runtime);
            this.scheduler = scheduler;
        }

        @Override
        void fire() {
            fired++;
            Runnable then = onFire;
            onFire = () -> {};
            then.run();
        }

        @Override
        boolean active() {
            return true;
        }

        @Override
        void cannotRun() {
            throw new AssertionError("the scheduler is not shut down");
        }

        @Override
        String lockName() {
            return "race";
        }

        @Override
        ExpiryWheel wheel() {
            return wheel;
        }

        @Override
        ScheduledExecutorService scheduler() {
            return scheduler;
        }
    }

    /** Keeps every task; {@link #runAll} runs those kept so far, once. */
    private static final class TicksOnDemand extends DefaultLeaseLincheckTest.NeverRunningScheduler {
        int ticks;
        final List<Runnable> kept = new ArrayList<>();

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            ticks++;
            kept.add(command);
            return new Timed();
        }

        void runAll() {
            List<Runnable> now = List.copyOf(kept);
            kept.clear();
            now.forEach(Runnable::run);
        }
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
