/** Implementation of lock-jdbc; not API. */
@NullMarked
package io.lockstep.jdbc.internal;

import org.jspecify.annotations.NullMarked;
