package io.lockstep.spring.boot.autoconfigure;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Reads the {@code lockstepHealthContributor} of either Boot line through the methods both lines' health
 * types share ({@code health()}, {@code getStatus().getCode()}, {@code getDetails()}, {@code
 * getContributor(name)}): Boot 4 keeps them in {@code spring-boot-health}, Boot 3 in the actuator, so
 * {@link LockstepHealthTest} runs unchanged on both. What is typed by line stays in {@code
 * LockstepHealthTypesTest} (Boot 4) and {@code Boot3HealthTest} (Boot 3).
 */
final class Healths {

    private Healths() {}

    /** One reading of an indicator: its status code, details and text. */
    record Reading(String status, Map<String, Object> details, String text) {}

    /** Asks {@code indicator} for its health once. */
    static Reading read(Object indicator) {
        Object health = call(indicator, "health");
        @SuppressWarnings("unchecked")
        Map<String, Object> details = (Map<String, Object>) call(health, "getDetails");
        return new Reading((String) call(call(health, "getStatus"), "getCode"), details, health.toString());
    }

    /** Reads {@code indicator} until {@code done}, for at most {@code seconds}; returns the last reading. */
    static Reading await(Object indicator, Predicate<Reading> done, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        Reading reading = read(indicator);
        while (!done.test(reading) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            reading = read(indicator);
        }
        return reading;
    }

    /** The member {@code name} of a composite contributor. */
    static Object member(Object composite, String name) {
        return call(composite, "getContributor", name);
    }

    private static Object call(Object target, String name, Object... args) {
        for (Method method : target.getClass().getMethods()) {
            if (method.getName().equals(name) && method.getParameterCount() == args.length) {
                try {
                    method.setAccessible(true); // fromMap's composite is a class private to Boot
                    return method.invoke(target, args);
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                } catch (InvocationTargetException e) {
                    throw new IllegalStateException(e.getCause());
                }
            }
        }
        throw new IllegalArgumentException(target.getClass() + " has no " + name);
    }
}
