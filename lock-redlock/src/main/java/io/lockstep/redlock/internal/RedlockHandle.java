package io.lockstep.redlock.internal;

import io.lockstep.LossReason;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What a Redlock grant needs to be extended and released: the lock key, the value this round wrote on
 * the nodes, its fence, and the loss signal the lease listens to. Thread-safe.
 */
public final class RedlockHandle {

    private final String name;
    private final String lockKey;
    private final String value;
    private final long fence;
    private final boolean[] released;
    private final CompletableFuture<LossReason> loss = new CompletableFuture<>();
    private volatile Duration leaseTime;

    RedlockHandle(String name, String lockKey, String value, long fence, Duration leaseTime, int nodes) {
        this.name = name;
        this.lockKey = lockKey;
        this.value = value;
        this.fence = fence;
        this.leaseTime = leaseTime;
        this.released = new boolean[nodes];
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
