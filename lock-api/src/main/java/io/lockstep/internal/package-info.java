/** Implementation details of lock-api; not API, may change in any release. */
@NullMarked
package io.lockstep.internal;

import org.jspecify.annotations.NullMarked;
