/** Spring Boot auto-configuration for Lockstep, driven by the {@code lockstep.*} properties. */
@NullMarked
package io.lockstep.spring.boot.autoconfigure;

import org.jspecify.annotations.NullMarked;
