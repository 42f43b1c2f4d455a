package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.LockProvider;
import io.lockstep.shedlock.LockstepShedLockProvider;
import io.lockstep.spring.integration.LockstepLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * ShedLock and Spring Integration on the application's {@link LockProvider} (the only one, or the primary), when
 * their Lockstep adapters are on the class path and the application has not defined its own:
 * {@code io.lockstep:lock-shedlock} gives a ShedLock {@code LockProvider}, {@code
 * io.lockstep:lock-spring-integration} a {@code LockRegistry}. Neither owns the provider; it closes with
 * the context.
 */
@AutoConfiguration(after = LockstepAutoConfiguration.class)
@ConditionalOnSingleCandidate(LockProvider.class)
public final class LockstepAdaptersAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({LockstepShedLockProvider.class, net.javacrumbs.shedlock.core.LockProvider.class})
    static final class ShedLockConfiguration {
        @Bean
        @ConditionalOnMissingBean(net.javacrumbs.shedlock.core.LockProvider.class)
        LockstepShedLockProvider lockstepShedLockProvider(LockProvider locks) {
            return new LockstepShedLockProvider(locks);
        }
    }

    /** Only on Spring Integration 7, which lock-spring-integration is built for (Boot 3.5 has 6.5). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            value = {LockstepLockRegistry.class, org.springframework.integration.support.locks.LockRegistry.class},
            name = "org.springframework.integration.support.locks.DistributedLock")
    static final class SpringIntegrationConfiguration {
        @Bean
        @ConditionalOnMissingBean(org.springframework.integration.support.locks.LockRegistry.class)
        LockstepLockRegistry lockstepLockRegistry(LockProvider locks) {
            return new LockstepLockRegistry(locks);
        }
    }
}
