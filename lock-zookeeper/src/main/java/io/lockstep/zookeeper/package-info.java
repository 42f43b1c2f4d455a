/**
 * Locks on a ZooKeeper ensemble through Curator: {@link io.lockstep.zookeeper.ZooKeeperLockProvider}
 * and the {@code zookeeper://} factory {@link io.lockstep.zookeeper.ZooKeeperLockProviderFactory}.
 */
@NullMarked
package io.lockstep.zookeeper;

import org.jspecify.annotations.NullMarked;
