package io.lockstep.redlock.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The replies of one fan-out to N nodes, filled in by the node calls as they finish. A waiter stops at
 * a deadline or as soon as the replies so far decide the question (a quorum granted), so one slow node
 * never slows a round that does not need it. Thread-safe.
 */
final class Replies<T> {

    /** One node's answer: a value, or why there is none. */
    record Reply<T>(@Nullable T value, @Nullable String failure) {}

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Object[] replies;
    private int answered;

    Replies(int nodes) {
        this.replies = new Object[nodes];
    }

    void succeed(int node, T value) {
        put(node, new Reply<>(value, null));
    }

    void fail(int node, String failure) {
        put(node, new Reply<>(null, failure));
    }

    private void put(int node, Reply<T> reply) {
        lock.lock();
        try {
            if (replies[node] == null) {
                replies[node] = reply;
                answered++;
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until every node answered, {@code enough} holds for the replies so far, or
     * {@code deadlineNanos} ({@link System#nanoTime()}) passes; returns the replies then (null for a node
     * that has not answered).
     */
    List<@Nullable Reply<T>> await(Predicate<List<@Nullable Reply<T>>> enough, long deadlineNanos) {
        lock.lock();
        try {
            while (true) {
                List<@Nullable Reply<T>> now = snapshot();
                if (answered == replies.length || enough.test(now)) {
                    return now;
                }
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    return now;
                }
                try {
                    changed.awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return snapshot();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    @SuppressWarnings("unchecked")
    private List<@Nullable Reply<T>> snapshot() {
        List<@Nullable Reply<T>> out = new ArrayList<>(replies.length);
        for (Object reply : replies) {
            out.add((Reply<T>) reply);
        }
        return out;
    }

    /** Counts the replies whose value matches. */
    static <T> int count(List<@Nullable Reply<T>> replies, Predicate<T> matches) {
        int n = 0;
        for (Reply<T> reply : replies) {
            if (reply != null && reply.value() != null && matches.test(reply.value())) {
                n++;
            }
        }
        return n;
    }

    /** Counts the nodes that did not answer with a value (failed or not yet answered). */
    static <T> int unknown(List<@Nullable Reply<T>> replies) {
        int n = 0;
        for (Reply<T> reply : replies) {
            if (reply == null || reply.value() == null) {
                n++;
            }
        }
        return n;
    }

    static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    @Override
    public String toString() {
        lock.lock();
        try {
            return Arrays.toString(replies);
        } finally {
            lock.unlock();
        }
    }
}
