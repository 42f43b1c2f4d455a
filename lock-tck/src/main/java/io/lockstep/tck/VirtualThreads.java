package io.lockstep.tck;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.jspecify.annotations.Nullable;

/**
 * Virtual threads where the JVM has them (Java 21 and later), found by reflection so the kit still
 * compiles for and runs on Java 17, where the tests that need them are skipped by assumption.
 */
final class VirtualThreads {

    private static final @Nullable Method START = find();

    private VirtualThreads() {}

    private static @Nullable Method find() {
        try {
            return Thread.class.getMethod("startVirtualThread", Runnable.class);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** Whether this JVM has virtual threads. */
    static boolean available() {
        return START != null;
    }

    /**
     * Starts {@code task} on a new virtual thread.
     *
     * @throws IllegalStateException if this JVM has no virtual threads
     */
    static Thread start(Runnable task) {
        Method start = START;
        if (start == null) {
            throw new IllegalStateException("this JVM (" + Runtime.version() + ") has no virtual threads");
        }
        try {
            Thread thread = (Thread) start.invoke(null, task);
            if (thread == null) {
                throw new IllegalStateException("Thread.startVirtualThread returned null");
            }
            return thread;
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot start a virtual thread", e);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("cannot start a virtual thread", e.getCause());
        }
    }
}
