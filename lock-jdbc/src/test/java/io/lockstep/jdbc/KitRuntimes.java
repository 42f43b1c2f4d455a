package io.lockstep.jdbc;

import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.Locks;

/**
 * One runtime per kit class, each with a callback executor of its own. This module runs its test
 * classes two at a time in one JVM (junit-platform.properties), and the kit's test that a blocking
 * {@code lost()} callback does not stop renewal blocks every thread of the provider's callback
 * executor for a few seconds. With the JVM's shared executor that also held up the {@code lost()}
 * stages of the class running beside it (its expiry test timed out once in CI); two applications in
 * one JVM that must not delay each other's callbacks give each its own executor the same way.
 * The scheduler and renewal executor stay the shared ones.
 */
final class KitRuntimes {

    private static final ClassValue<LockRuntime> RUNTIMES = new ClassValue<>() {
        @Override
        protected LockRuntime computeValue(Class<?> kit) {
            return LockRuntime.builder()
                    .callbackExecutor(LockRuntime.newCallbackExecutor(LockRuntime.DEFAULT_CALLBACK_THREADS))
                    .build();
        }
    };

    private KitRuntimes() {}

    /** Opens {@code uri} on the runtime of {@code kit}'s class. */
    static LockProvider open(Object kit, String uri) {
        return Locks.open(LockConfig.of(uri).withRuntime(RUNTIMES.get(kit.getClass())));
    }
}
