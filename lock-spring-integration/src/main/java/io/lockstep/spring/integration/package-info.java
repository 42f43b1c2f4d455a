/** Lockstep for Spring Integration (work in progress). */
@NullMarked
package io.lockstep.spring.integration;

import org.jspecify.annotations.NullMarked;
