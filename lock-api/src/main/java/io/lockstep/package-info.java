/**
 * Lockstep's lock API: open a {@link io.lockstep.LockProvider} by URI with {@link io.lockstep.Locks},
 * acquire a {@link io.lockstep.Lease}, and watch {@link io.lockstep.Lease#lost()} for the moment it
 * ends.
 */
@NullMarked
package io.lockstep;

import org.jspecify.annotations.NullMarked;
