package io.lockstep.internal;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One provider's share of a shared executor: at most {@code maxRunning} of its tasks run there at
 * once, the rest wait in this lane's own queue (FIFO). So a backend that is slow or down holds at most
 * that many of the shared threads, and tasks of other providers never queue behind its tasks.
 * Thread-safe; {@link #execute} never blocks.
 */
public final class BoundedLane implements Executor {

    private static final Logger log = LoggerFactory.getLogger(BoundedLane.class);

    private final Executor shared;
    private final int maxRunning;
    private final ConcurrentLinkedDeque<Runnable> queue = new ConcurrentLinkedDeque<>();
    private final AtomicInteger running = new AtomicInteger();

    /** A lane on {@code shared} running at most {@code maxRunning} tasks at once. */
    public BoundedLane(Executor shared, int maxRunning) {
        if (maxRunning < 1) {
            throw new IllegalArgumentException("maxRunning must be at least 1, was " + maxRunning);
        }
        this.shared = shared;
        this.maxRunning = maxRunning;
    }

    /**
     * Queues {@code task}; it runs on the shared executor when fewer than {@code maxRunning} of this
     * lane's tasks run.
     *
     * @throws RejectedExecutionException if the shared executor is shut down and the task could not
     *     be handed to it
     */
    @Override
    public void execute(Runnable task) {
        queue.addLast(task);
        try {
            drain();
        } catch (RejectedExecutionException e) {
            if (queue.removeLastOccurrence(task)) {
                throw e;
            }
            // Ours was already handed over (and ran); a refused task of someone else stays queued.
        }
    }

    /** Tasks waiting for a free place in this lane (not counting those running). */
    public int queued() {
        return queue.size();
    }

    private void drain() {
        while (!queue.isEmpty()) {
            int now = running.get();
            if (now >= maxRunning) {
                return;
            }
            if (!running.compareAndSet(now, now + 1)) {
                continue;
            }
            Runnable next = queue.pollFirst();
            if (next == null) {
                running.decrementAndGet();
                continue;
            }
            try {
                shared.execute(() -> runThenNext(next));
            } catch (RejectedExecutionException e) {
                running.decrementAndGet();
                queue.addFirst(next);
                throw e;
            }
        }
    }

    private void runThenNext(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException | Error e) {
            log.error("Background task failed", e);
        } finally {
            running.decrementAndGet();
            try {
                drain();
            } catch (RejectedExecutionException e) {
                log.debug("Executor shut down; {} background tasks left undone", queue.size());
            }
        }
    }
}
