package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.spring.boot.FencingToken;
import io.lockstep.spring.boot.Locked;
import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What a native image of an application using the starter needs beyond what Spring's AOT processing
 * finds itself: the {@code ServiceLoader} file through which {@code io.lockstep.Locks} finds backends,
 * the annotations the {@code @Locked} advisor reads at run time, and the properties classes Boot binds.
 */
final class LockstepRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern("META-INF/services/io.lockstep.spi.LockProviderFactory");
        hints.reflection().registerType(Locked.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        hints.reflection().registerType(FencingToken.class);
        for (Class<?> type : new Class<?>[] {
            LockstepProperties.class,
            LockstepProperties.Provider.class,
            LockstepProperties.Lease.class,
            LockstepProperties.Runtime.class,
            LockstepProperties.LockedMethods.class,
            LockstepProperties.Health.class
        }) {
            hints.reflection()
                    .registerType(
                            type, MemberCategory.INVOKE_PUBLIC_CONSTRUCTORS, MemberCategory.INVOKE_PUBLIC_METHODS);
        }
    }
}
