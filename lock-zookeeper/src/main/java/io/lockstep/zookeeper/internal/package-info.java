/** The ZooKeeper backend's internals: the lock recipe, paths and error mapping. Not API. */
@NullMarked
package io.lockstep.zookeeper.internal;

import org.jspecify.annotations.NullMarked;
