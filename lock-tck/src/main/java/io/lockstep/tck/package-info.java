/**
 * Lockstep's technology compatibility kit: extend {@link io.lockstep.tck.LockProviderCompatibilityKit}
 * with one method that builds your provider, and the kit checks every promise it makes.
 */
@NullMarked
package io.lockstep.tck;

import org.jspecify.annotations.NullMarked;
