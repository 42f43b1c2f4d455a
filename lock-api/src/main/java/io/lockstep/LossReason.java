package io.lockstep;

/** Why a {@link Lease} ended; the value {@link Lease#lost()} completes with. */
public enum LossReason {
    /** The holder released it. */
    RELEASED,
    /** Its validity ran out and nothing renewed it. */
    EXPIRED,
    /** Renewal kept failing (backend unreachable) until the validity ran out. */
    RENEWAL_FAILED,
    /** The backend said this holder no longer holds the lock (it expired there or was deleted). */
    NOT_HELD,
    /** The backend session that owned the lease expired (etcd lease, ZooKeeper session). */
    SESSION_EXPIRED,
    /** A quorum of nodes no longer grants the lock (Redlock). */
    QUORUM_LOST,
    /** The connection that held the lock was lost (SQL transaction, ZooKeeper connection). */
    CONNECTION_LOST,
    /** Renewal stopped because the lease reached {@link LeaseOptions#maxHold()}. */
    MAX_HOLD_REACHED
}
