package io.lockstep;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One leader among many processes for a piece of work: acquire the lock, run the work while the
 * lease is renewed, stop the work the moment the lease is lost, try again, and hand over on shutdown.
 *
 * <pre>{@code
 * try (Leadership leader = Leadership.builder(locks, "invoice-queue")
 *         .leaseTime(Duration.ofSeconds(15))
 *         .start(context -> {
 *             while (context.isLeader()) {
 *                 processNextBatch(context.fencingToken()); // interrupted the moment leadership is lost
 *             }
 *         })) {
 *     ...
 * }
 * }</pre>
 *
 * <p>The work runs on one thread owned by this object. When the lease is lost, that thread is
 * interrupted and {@link Context#isLeader()} turns false: the work must stop promptly and must not
 * write anything after that without checking its fencing token. When the work returns, the lease is
 * released and, after {@code retryDelay}, the process competes again. {@link #close()} stops the work
 * and releases the lease so another process takes over at once.
 *
 * <p>The thread survives anything the provider or the work throws: a failure to compete (an unreachable
 * backend, options the provider refuses) is logged without secrets and retried after {@code
 * retryDelay}; work that throws gives leadership up, is logged, and competes again. A follower asks the
 * backend at most once per {@code max(acquireWait, retryDelay)}.
 */
public final class Leadership implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Leadership.class);

    /** The work a leader does. */
    @FunctionalInterface
    public interface Work {
        /** Does the leader's work; return to give leadership up, throw to give it up and log. */
        void lead(Context context) throws Exception;
    }

    /** What the work sees while it leads. */
    public interface Context {
        /** The lease that makes this process the leader. */
        Lease lease();

        /** True while the lease is valid and the leadership has not been closed. */
        boolean isLeader();

        /** The lease's fencing token, for the resources the work writes; empty if the provider has none. */
        default java.util.OptionalLong fencingToken() {
            return lease().fencingToken();
        }
    }

    private final LockProvider provider;
    private final String name;
    private final LeaseOptions options;
    private final Duration retryDelay;
    private final Work work;
    private final Thread thread;
    private final Object monitor = new Object();

    private volatile boolean closing;
    private @Nullable Lease current; // guarded by monitor
    private boolean working; // guarded by monitor
    private long terms; // guarded by monitor

    private Leadership(Builder b, Work work) {
        this.provider = b.provider;
        this.name = b.name;
        this.options = LeaseOptions.of(b.leaseTime).withWaitTime(b.acquireWait).withAutoRenew();
        this.retryDelay = b.retryDelay;
        this.work = work;
        this.thread = new Thread(this::run, "lockstep-leader-" + name);
        this.thread.setDaemon(true);
    }

    /** A builder for leadership of lock {@code name} on {@code provider}. */
    public static Builder builder(LockProvider provider, String name) {
        return new Builder(provider, name);
    }

    /** Whether this process leads right now. */
    public boolean isLeader() {
        synchronized (monitor) {
            return current != null && current.isValid() && !closing;
        }
    }

    /** How many times this process has become leader. */
    public long terms() {
        synchronized (monitor) {
            return terms;
        }
    }

    /**
     * Stops the work (interrupting it), releases the lease so another process can lead at once, and
     * waits up to 10 s for the work thread to end.
     */
    @Override
    public void close() {
        closing = true;
        synchronized (monitor) {
            if (working) {
                thread.interrupt();
            }
        }
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("Leader work for lock '{}' ignored interruption for 10 s", name);
        }
    }

    private void run() {
        while (!closing) {
            long startedAt = System.nanoTime();
            Lease lease;
            try {
                lease = provider.tryAcquire(name, options).orElse(null);
            } catch (RuntimeException e) {
                // Any failure, not only a LockException: the thread must outlive a provider's surprise.
                if (closing) {
                    return;
                }
                log.warn(
                        "Could not compete for leadership of '{}'; retrying in {}: {}", name, retryDelay, e.toString());
                pause(retryDelay);
                continue;
            }
            if (lease == null) {
                // Someone else leads. The wait is notified by the backend on release, but a zero or short
                // acquireWait returns at once: pause for the rest of retryDelay, never spin.
                pause(retryDelay.minusNanos(System.nanoTime() - startedAt));
                continue;
            }
            lead(lease);
            if (!closing) {
                pause(retryDelay);
            }
        }
    }

    private void lead(Lease lease) {
        synchronized (monitor) {
            current = lease;
            working = true;
            terms++;
        }
        lease.lost().thenAccept(reason -> {
            synchronized (monitor) {
                if (working && current == lease && reason != LossReason.RELEASED) {
                    log.warn("Leadership of '{}' lost ({}); stopping the work", name, reason);
                    thread.interrupt();
                }
            }
        });
        Context context = new Context() {
            @Override
            public Lease lease() {
                return lease;
            }

            @Override
            public boolean isLeader() {
                return !closing && lease.isValid();
            }
        };
        try {
            if (!closing) {
                work.lead(context);
            }
        } catch (InterruptedException e) {
            log.debug("Leader work for '{}' interrupted", name);
        } catch (Exception | Error e) {
            log.error("Leader work for '{}' failed; giving up leadership", name, e);
        } finally {
            synchronized (monitor) {
                working = false;
                current = null;
            }
            Thread.interrupted(); // an interrupt meant for the work must not break the release
            try {
                lease.close();
            } catch (LockException e) {
                log.warn("Releasing leadership of '{}' failed; it ends by its lease time: {}", name, e.toString());
            }
        }
    }

    private void pause(Duration delay) {
        if (delay.isNegative() || delay.isZero() || closing) {
            return;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(delay.toNanos());
        } catch (InterruptedException e) {
            // close() interrupts to stop at once; the loop checks closing.
        }
    }

    /** Builds and starts a {@link Leadership}. */
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

        /** The lease time, renewed at a third of it; default 30 s. Losing leadership is noticed within it. */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = LeaseOptions.requireValidLeaseTime(leaseTime);
            return this;
        }

        /**
         * How long one acquire attempt waits for the current leader to go; default 30 s. A follower asks
         * again after this, or after {@code retryDelay} if that is longer.
         */
        public Builder acquireWait(Duration acquireWait) {
            if (acquireWait == null
                    || acquireWait.isNegative()
                    || acquireWait.compareTo(LeaseOptions.MAX_DURATION) > 0) {
                throw new IllegalArgumentException(
                        "acquireWait must be between PT0S and " + LeaseOptions.MAX_DURATION + ", was " + acquireWait);
            }
            this.acquireWait = acquireWait;
            return this;
        }

        /**
         * The pause after leading ends or the backend fails, before competing again, and the least time
         * between two attempts of a follower; default 1 s.
         */
        public Builder retryDelay(Duration retryDelay) {
            if (retryDelay == null || retryDelay.isNegative() || retryDelay.compareTo(LeaseOptions.MAX_DURATION) > 0) {
                throw new IllegalArgumentException(
                        "retryDelay must be between PT0S and " + LeaseOptions.MAX_DURATION + ", was " + retryDelay);
            }
            this.retryDelay = retryDelay;
            return this;
        }

        /**
         * Starts competing for leadership on a new thread; the work runs each time this process leads.
         *
         * @throws IllegalArgumentException naming the field if the settings do not fit together: a zero
         *     {@code acquireWait} needs a positive {@code retryDelay}, or the follower would ask the
         *     backend without pause
         */
        public Leadership start(Work work) {
            Objects.requireNonNull(work, "work");
            if (acquireWait.isZero() && retryDelay.isZero()) {
                throw new IllegalArgumentException(
                        "retryDelay must be positive when acquireWait is zero, was " + retryDelay);
            }
            Leadership leadership = new Leadership(this, work);
            leadership.thread.start();
            return leadership;
        }
    }
}
