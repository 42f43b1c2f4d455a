package io.lockstep.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the parameter of a {@link Locked @Locked} method that receives the lease's fencing token: of
 * type {@code long} or {@code Long} (the provider must claim {@link io.lockstep.Capability#FENCING}, or
 * the call fails before the method runs) or {@code OptionalLong} (empty without fencing). The value the
 * caller passes is replaced.
 */
@Target(ElementType.PARAMETER)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface FencingToken {}
