/**
 * Lockstep on etcd v3 through jetcd: tier CONSENSUS, fencing tokens from the lock key's create
 * revision, waiters queued in order (FAIR) and woken by a watch on their predecessor.
 */
@NullMarked
package io.lockstep.etcd;

import org.jspecify.annotations.NullMarked;
