/** Redlock internals: the backend, per-node calls, the fan-out and the round decisions. Not API. */
@NullMarked
package io.lockstep.redlock.internal;

import org.jspecify.annotations.NullMarked;
