package io.lockstep;

/**
 * How much a backend's mutual exclusion survives, defined by the failures under which two holders can
 * never hold the same lock at once (each tier also promises everything in "every tier" below). Tiers
 * describe different failure models and are not a strict order: pick by the faults your deployment
 * has, and check a fenced resource where a stale holder must never write.
 *
 * <p><b>Every tier</b> survives: a holder process that crashes or is killed (its lock ends by its lease
 * time, or at once when its session or connection ends); a client that cannot reach the backend
 * (acquiring fails closed with {@link BackendUnavailableException}, and the holder's {@link
 * Lease#lost()} completes by its validity deadline); a paused or killed server, for as long as it is
 * down. No tier survives a holder that pauses longer than its lease and then writes without checking
 * its {@link Lease#fencingToken() fencing token}.
 *
 * <p>A provider claims a tier in {@link ProviderInfo#tier()}; the compatibility kit checks the failures
 * it can cause on one machine (pause, kill and restart, partition, lost replies, a holder frozen past its
 * lease). Failures inside a replicated backend (failover, clock drift between nodes) are for the
 * provider's own tests.
 */
public enum StrengthTier {
    /**
     * One server's memory decides: survives what every tier survives, and nothing more. Exclusion and
     * fences are lost when the server restarts without having written the lock to disk, or fails over to
     * a replica that had not received it (asynchronous replication). Example: one Redis.
     */
    BEST_EFFORT,
    /**
     * A majority of independent nodes decides: survives, in addition, the crash, restart (after a delay of
     * one lease time, or with every write persisted) or partition of any minority of nodes. Assumes clock
     * rates differ by at most the configured drift between the nodes and the client. Example: Redlock.
     */
    QUORUM,
    /**
     * A replicated log with consensus decides: survives, in addition, any minority of replicas lost or
     * partitioned, leader changes and restarts, with no timing assumption for safety (time only bounds
     * how long a dead holder keeps the lock). Examples: etcd, ZooKeeper.
     */
    CONSENSUS,
    /**
     * A database transaction or session decides: survives, in addition, a restart of the database (its
     * durable state) and the loss of the holder's connection, which ends the lock at once; fences come
     * from a durable sequence. As available as the database (and its failover). Example: a SQL row lock
     * or advisory lock.
     */
    TRANSACTIONAL
}
