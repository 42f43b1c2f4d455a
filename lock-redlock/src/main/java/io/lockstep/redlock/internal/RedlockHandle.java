package io.lockstep.redlock.internal;

import io.lockstep.LossReason;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What a Redlock grant needs to be extended and released: the lock key, the value this round wrote on
 * the nodes, its fence, the loss signal the lease listens to, and what is known of each node: released
 * there yet, or its grant request still unsettled (no answer came, so it may still run there until its
 * deadline). Thread-safe.
 */
public final class RedlockHandle {

    private final String name;
    private final String lockKey;
    private final String value;
    private final long fence;
    private final boolean[] released;
    private final boolean[] unsettled;
    private final long settledAtNanos;
    private long keysEndNanos;
    private final CompletableFuture<LossReason> loss = new CompletableFuture<>();
    private volatile Duration leaseTime;

    /**
     * A grant over {@code unsettled.length} nodes; the requests to the {@code unsettled} ones can run
     * there until {@code settledAtNanos}, and no key of it outlives {@code keysEndNanos} (both of {@link
     * System#nanoTime()}).
     */
    RedlockHandle(
            String name,
            String lockKey,
            String value,
            long fence,
            Duration leaseTime,
            boolean[] unsettled,
            long settledAtNanos,
            long keysEndNanos) {
        this.name = name;
        this.lockKey = lockKey;
        this.value = value;
        this.fence = fence;
        this.leaseTime = leaseTime;
        this.released = new boolean[unsettled.length];
        this.unsettled = unsettled.clone();
        this.settledAtNanos = settledAtNanos;
        this.keysEndNanos = keysEndNanos;
    }

    /** Whether the grant request to {@code node} may still run there (no answer came, its deadline is ahead). */
    boolean isUnsettledOn(int node, long nowNanos) {
        return unsettled[node] && nowNanos - settledAtNanos < 0;
    }

    /** From when no grant request of this handle can run on any node any more. */
    long settledAtNanos() {
        return settledAtNanos;
    }

    /** Until when a key of this grant may exist on some node (every extend request pushes it out). */
    synchronized long keysEndNanos() {
        return keysEndNanos;
    }

    synchronized void keysMayLastUntil(long nanos) {
        if (nanos - keysEndNanos > 0) {
            keysEndNanos = nanos;
        }
    }

    /** The lock name. */
    public String name() {
        return name;
    }

    /** The key on every node. */
    public String lockKey() {
        return lockKey;
    }

    /** The value written on the nodes: the owner token, a colon and the round number. */
    public String value() {
        return value;
    }

    /** The fencing token. */
    public long fence() {
        return fence;
    }

    Duration leaseTime() {
        return leaseTime;
    }

    void leaseTime(Duration leaseTime) {
        this.leaseTime = leaseTime;
    }

    CompletableFuture<LossReason> loss() {
        return loss;
    }

    synchronized boolean isReleasedOn(int node) {
        return released[node];
    }

    synchronized void markReleasedOn(int node) {
        released[node] = true;
    }

    synchronized int releasedCount() {
        int n = 0;
        for (boolean r : released) {
            if (r) {
                n++;
            }
        }
        return n;
    }

    @Override
    public String toString() {
        return "RedlockHandle[" + name + ", fence=" + fence + "]";
    }
}
