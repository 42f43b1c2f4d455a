package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.spring.boot.FencingToken;
import io.lockstep.spring.boot.Locked;
import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.util.ClassUtils;

/**
 * What a native image of an application using the starter needs beyond what Spring's AOT processing
 * finds itself: the {@code ServiceLoader} file through which {@code io.lockstep.Locks} finds backends,
 * the annotations the {@code @Locked} advisor reads at run time, the properties classes Boot binds, and
 * on Boot 3 the health indicator's JDK proxy and the health builder it calls by reflection.
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
        if (ClassUtils.isPresent(LockstepBoot3HealthAutoConfiguration.BOOT3_HEALTH_INDICATOR, classLoader)) {
            hints.proxies()
                    .registerJdkProxy(TypeReference.of(LockstepBoot3HealthAutoConfiguration.BOOT3_HEALTH_INDICATOR));
            for (String type : new String[] {"Health", "Health$Builder", "CompositeHealthContributor"}) {
                hints.reflection()
                        .registerType(
                                TypeReference.of(LockstepBoot3HealthAutoConfiguration.BOOT3_HEALTH + type),
                                MemberCategory.INVOKE_PUBLIC_METHODS);
            }
        }
    }
}
