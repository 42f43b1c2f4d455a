/**
 * {@code lockctl}: compare the backends' strength tiers under real faults ({@code compare}), run the
 * compatibility kit against a URI ({@code tck}), hold a lock ({@code acquire}), look at one ({@code
 * inspect}) and list the providers on the class path ({@code backends}). {@link io.lockstep.cli.LockCtl}
 * is the entry point; its exit codes are documented there.
 */
@NullMarked
package io.lockstep.cli;

import org.jspecify.annotations.NullMarked;
