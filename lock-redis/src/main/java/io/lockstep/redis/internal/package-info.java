/** Implementation of lock-redis; not API. */
@NullMarked
package io.lockstep.redis.internal;

import org.jspecify.annotations.NullMarked;
