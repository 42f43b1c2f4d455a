/**
 * What happened, and whether it was allowed: a {@link io.lockstep.tck.history.History} of every
 * client's operations (in this JVM and in child JVMs), a {@link io.lockstep.tck.history.HistoryChecker}
 * that finds overlapping holds, fences that do not increase, locks left behind by failed acquires and
 * lost increments, and a {@link io.lockstep.tck.history.FencedRegister} that rejects stale writes.
 */
@NullMarked
package io.lockstep.tck.history;

import org.jspecify.annotations.NullMarked;
