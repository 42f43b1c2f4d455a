/** Lockstep Spring Boot starter (work in progress). */
@NullMarked
package io.lockstep.spring.boot;

import org.jspecify.annotations.NullMarked;
