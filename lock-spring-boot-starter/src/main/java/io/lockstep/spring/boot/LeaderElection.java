package io.lockstep.spring.boot;

import io.lockstep.Leadership;
import io.lockstep.LockNames;
import io.lockstep.LockProvider;
import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;

/**
 * {@link Leadership} as a Spring bean: it competes for the lock when the context starts, runs the work
 * while this process leads (interrupted the moment the lease is lost), and hands over (stops the work,
 * releases the lease) when the context stops, before the provider closes.
 *
 * <pre>{@code
 * @Bean
 * LeaderElection invoiceQueueLeader(LockProvider locks) {
 *     return LeaderElection.builder(locks, "invoice-queue")
 *             .leaseTime(Duration.ofSeconds(15))
 *             .work(context -> { while (context.isLeader()) drainOnce(context.fencingToken()); });
 * }
 * }</pre>
 *
 * <p>Without work it only holds leadership, and other beans ask {@link #isLeader()} (or use it as a
 * {@link BooleanSupplier}) to run something only on the leader, for example at the top of a {@code
 * @Scheduled} method. Started late and stopped early (phase {@value #PHASE}), so the beans it uses are
 * up while it leads. Thread-safe.
 */
public final class LeaderElection implements SmartLifecycle, BooleanSupplier {

    /** The lifecycle phase: after most beans start, and stopped before them. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1024;

    private final LockProvider provider;
    private final String name;
    private final Duration leaseTime;
    private final Duration acquireWait;
    private final Duration retryDelay;
    private final Leadership.Work work;
    private @Nullable Leadership leadership; // guarded by this

    private LeaderElection(Builder b, Leadership.Work work) {
        this.provider = b.provider;
        this.name = b.name;
        this.leaseTime = b.leaseTime;
        this.acquireWait = b.acquireWait;
        this.retryDelay = b.retryDelay;
        this.work = work;
        // Fail when the bean is built, not when the context starts: the same checks Leadership.Builder makes.
        newLeadership();
    }

    /** A builder for leadership of lock {@code name} on {@code provider}. */
    public static Builder builder(LockProvider provider, String name) {
        return new Builder(provider, name);
    }

    private Leadership.Builder newLeadership() {
        return Leadership.builder(provider, name)
                .leaseTime(leaseTime)
                .acquireWait(acquireWait)
                .retryDelay(retryDelay);
    }

    /** The lock's name. */
    public String name() {
        return name;
    }

    /** Whether this process leads right now; false before start and after stop. */
    public synchronized boolean isLeader() {
        return leadership != null && leadership.isLeader();
    }

    /**
     * Runs {@code task} on this thread if this process leads now, for "only on the leader" in a
     * {@code @Scheduled} method: {@code queueLeader.runIfLeader(this::drain)}. Leadership is checked once,
     * before the task; work that must stop the moment leadership is lost belongs in {@link
     * Builder#work}, which is interrupted.
     *
     * @return whether the task ran
     */
    public boolean runIfLeader(Runnable task) {
        if (!isLeader()) {
            return false;
        }
        task.run();
        return true;
    }

    /** Same as {@link #isLeader()}. */
    @Override
    public boolean getAsBoolean() {
        return isLeader();
    }

    /** How many times this process has become leader since the context started. */
    public synchronized long terms() {
        return leadership == null ? 0 : leadership.terms();
    }

    /** Starts competing for leadership. */
    @Override
    public synchronized void start() {
        if (leadership == null) {
            leadership = newLeadership().start(work);
        }
    }

    /** Stops the work and releases the lease so another process leads at once (waits up to 10 s for the work). */
    @Override
    public void stop() {
        Leadership current;
        synchronized (this) {
            current = leadership;
            leadership = null;
        }
        if (current != null) {
            current.close();
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return leadership != null;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    @Override
    public String toString() {
        return "LeaderElection[" + name + "]";
    }

    /** Builds a {@link LeaderElection}; the durations are those of {@link Leadership.Builder}. */
    public static final class Builder {
        private final LockProvider provider;
        private final String name;
        private Duration leaseTime = Duration.ofSeconds(30);
        private Duration acquireWait = Duration.ofSeconds(30);
        private Duration retryDelay = Duration.ofSeconds(1);

        private Builder(LockProvider provider, String name) {
            this.provider = Objects.requireNonNull(provider, "provider");
            this.name = LockNames.requireValid(name);
        }

        /** The lease time, renewed at a third of it; default 30 s. */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = Objects.requireNonNull(leaseTime, "leaseTime");
            return this;
        }

        /** How long one attempt waits for the current leader to go; default 30 s. */
        public Builder acquireWait(Duration acquireWait) {
            this.acquireWait = Objects.requireNonNull(acquireWait, "acquireWait");
            return this;
        }

        /** The pause before competing again; default 1 s. */
        public Builder retryDelay(Duration retryDelay) {
            this.retryDelay = Objects.requireNonNull(retryDelay, "retryDelay");
            return this;
        }

        /** Leadership that runs {@code work} each time this process leads. */
        public LeaderElection work(Leadership.Work work) {
            return new LeaderElection(this, Objects.requireNonNull(work, "work"));
        }

        /** Leadership with no work of its own: it holds the lock until it is lost or the context stops. */
        public LeaderElection holdOnly() {
            return new LeaderElection(this, context -> {
                while (context.isLeader()) {
                    Thread.sleep(Math.max(1, leaseTime.toMillis() / 10));
                }
            });
        }
    }
}
