/**
 * Lockstep on one Redis server (or a Redis Cluster) through Jedis: tier BEST_EFFORT, fencing tokens
 * from an {@code INCR} in the same script as the {@code SET NX PX}, waiting notified by pub/sub.
 */
@NullMarked
package io.lockstep.redis;

import org.jspecify.annotations.NullMarked;
