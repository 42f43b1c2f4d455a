package io.lockstep;

/**
 * Why a {@link Lease} ended; the value {@link Lease#lost()} completes with, exactly once.
 *
 * <p>Which reasons a backend can report depends on what it can observe:
 *
 * <table>
 *   <caption>Loss reasons per kind of backend</caption>
 *   <tr><th scope="col">Kind of backend</th><th scope="col">Reasons besides {@code RELEASED}, {@code EXPIRED}, {@code MAX_HOLD_REACHED}</th></tr>
 *   <tr><td>key with a TTL (Redis)</td><td>{@code RENEWAL_FAILED}, {@code NOT_HELD}</td></tr>
 *   <tr><td>quorum of nodes (Redlock)</td><td>{@code RENEWAL_FAILED}, {@code QUORUM_LOST}, {@code NOT_HELD}</td></tr>
 *   <tr><td>session or lease on a consensus store (etcd, ZooKeeper)</td>
 *       <td>{@code SESSION_EXPIRED}, {@code CONNECTION_LOST}, {@code RENEWAL_FAILED}, {@code NOT_HELD}</td></tr>
 *   <tr><td>database session or transaction (advisory or row lock)</td>
 *       <td>{@code CONNECTION_LOST}, {@code RENEWAL_FAILED}, {@code NOT_HELD}</td></tr>
 * </table>
 *
 * <p>Code that only needs to stop work treats every reason but {@code RELEASED} alike: the lock is gone.
 * The compatibility kit asserts {@code RELEASED}, {@code EXPIRED} and {@code MAX_HOLD_REACHED} where
 * documented below, and "anything but {@code RELEASED}" under faults.
 */
public enum LossReason {
    /**
     * The holder released it: {@link Lease#release()}, {@link Lease#close()}, or closing the {@link
     * LockProvider} that acquired it (which releases every lease it still holds).
     */
    RELEASED,
    /** Its validity ran out and nothing renewed it (the lease was not auto-renewed). */
    EXPIRED,
    /**
     * Auto-renewal kept failing (backend unreachable, calls timing out) until the validity ran out; a
     * renewal that fails is retried while validity is left, so one transient failure does not end a lease.
     */
    RENEWAL_FAILED,
    /** The backend said this holder no longer holds the lock (it expired there or was deleted). */
    NOT_HELD,
    /** The backend session that owned the lease expired (etcd lease, ZooKeeper session). */
    SESSION_EXPIRED,
    /** A quorum of nodes no longer grants the lock (Redlock). */
    QUORUM_LOST,
    /** The connection that held the lock was lost (SQL session or transaction, ZooKeeper connection). */
    CONNECTION_LOST,
    /** Renewal stopped because the lease reached {@link LeaseOptions#maxHold()}. */
    MAX_HOLD_REACHED
}
