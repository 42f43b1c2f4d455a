package io.lockstep.redlock.internal;

import io.lockstep.LossReason;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * What a Redlock grant needs to be extended and released: the lock key, the value this round wrote on
 * the nodes, its fence, the loss signal the lease listens to, until when it is valid, and what is known of
 * each node: holding it (granted or last extended there), released there yet, or its grant request still
 * unsettled (no answer came, so it may still run there until its deadline). Thread-safe.
 */
public final class RedlockHandle {

    private final String name;
    private final String lockKey;
    private final String value;
    private final long fence;
    private final boolean[] released;
    private final boolean[] unsettled;
    private final boolean[] granted;
    private long validUntilNanos;
    /**
     * Whether the first release of this grant began while it was valid for at least a node timeout more;
     * null before any release.
     */
    private @Nullable Boolean releasedWhileValid;

    private final long settledAtNanos;
    private long keysEndNanos;
    private final CompletableFuture<LossReason> loss = new CompletableFuture<>();
    private volatile Duration leaseTime;

    /**
     * A grant over {@code granted.length} nodes, given by the {@code granted} ones and valid until {@code
     * validUntilNanos}; the requests to the {@code unsettled} ones can run there until {@code settledAtNanos},
     * and no key of it outlives {@code keysEndNanos} (all three of {@link System#nanoTime()}).
     */
    RedlockHandle(
            String name,
            String lockKey,
            String value,
            long fence,
            Duration leaseTime,
            boolean[] granted,
            boolean[] unsettled,
            long validUntilNanos,
            long settledAtNanos,
            long keysEndNanos) {
        this.name = name;
        this.lockKey = lockKey;
        this.value = value;
        this.fence = fence;
        this.leaseTime = leaseTime;
        this.released = new boolean[unsettled.length];
        this.granted = granted.clone();
        this.unsettled = unsettled.clone();
        this.validUntilNanos = validUntilNanos;
        this.settledAtNanos = settledAtNanos;
        this.keysEndNanos = keysEndNanos;
    }

    /**
     * A quorum extended the grant: the nodes in {@code extended} hold it, and it is valid until {@code
     * validUntilNanos} ({@link System#nanoTime()}).
     */
    synchronized void extendedOn(boolean[] extended, long validUntilNanos) {
        System.arraycopy(extended, 0, granted, 0, granted.length);
        if (validUntilNanos - this.validUntilNanos > 0) {
            this.validUntilNanos = validUntilNanos;
        }
    }

    /**
     * Notes when the release of this grant began: the first call, at {@code nowNanos}, decides whether the
     * grant was valid for at least {@code marginNanos} (a node timeout) more. With less left, a release may
     * reach a node after the key expired there, so a key found gone is not taken for released.
     */
    synchronized void releaseBegins(long nowNanos, long marginNanos) {
        if (releasedWhileValid == null) {
            releasedWhileValid = nowNanos + marginNanos - validUntilNanos < 0;
        }
    }

    /**
     * Whether {@code node}'s "the key is not there" answers a release of this grant as "released". It does
     * where the node granted (or last extended) and the release began at least a node timeout before the
     * grant's validity ended: the key was there when the release could arrive (a valid grant's keys outlive
     * its validity on every node that granted), and only this grant's releases
     * delete its value. It is then gone because one of them ran, perhaps one whose reply was lost (a retry,
     * or the background's, then finds nothing to delete): that node no longer holds the lock because it was
     * released, not because it never held it.
     */
    synchronized boolean goneMeansReleasedOn(int node) {
        return granted[node] && Boolean.TRUE.equals(releasedWhileValid);
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
