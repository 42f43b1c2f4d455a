package io.lockstep;

/**
 * How much a backend's mutual exclusion survives; see the tier table in the README. Tiers describe
 * different failure models and are not a strict order: pick by the faults your deployment has.
 */
public enum StrengthTier {
    /** One server (Redis): survives a holder crash; not a failover or a restart without fsync. */
    BEST_EFFORT,
    /** A majority of independent nodes (Redlock): survives a minority of nodes lost; assumes bounded clock drift. */
    QUORUM,
    /** A consensus store (etcd, ZooKeeper): survives partitions and leader loss. */
    CONSENSUS,
    /** A database transaction (SQL row lock): survives holder crash and connection loss; as available as the database. */
    TRANSACTIONAL
}
