/** JMH benchmarks of Lockstep providers on local servers they start themselves; see docs/benchmarks.md. */
@NullMarked
package io.lockstep.bench;

import org.jspecify.annotations.NullMarked;
