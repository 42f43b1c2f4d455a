/** Lockstep for ShedLock (work in progress). */
@NullMarked
package io.lockstep.shedlock;

import org.jspecify.annotations.NullMarked;
