package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.spring.boot.LockedAdvisor;
import io.lockstep.spring.boot.LockedDefaults;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.type.AnnotationMetadata;

/**
 * {@link io.lockstep.spring.boot.Locked @Locked} methods: the advisor, applied by Spring's auto-proxy
 * creator (class-based proxies, as Boot's default), registered here if nothing registered one. Turned
 * off with {@code lockstep.locked.enabled=false}.
 */
@AutoConfiguration(
        after = LockstepAutoConfiguration.class,
        afterName = "org.springframework.boot.autoconfigure.aop.AopAutoConfiguration")
@ConditionalOnBooleanProperty(name = "lockstep.locked.enabled", matchIfMissing = true)
@Import(LockstepLockedAutoConfiguration.AutoProxyRegistrar.class)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public final class LockstepLockedAutoConfiguration {

    /** The advisor; infrastructure, so Boot's infrastructure-only auto-proxy creator applies it. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static LockedAdvisor lockstepLockedAdvisor(ConfigurableListableBeanFactory beans) {
        // The properties are asked for lazily: an advisor is built before most beans, and a bad lockstep.*
        // value must fail as the properties bean, naming the property.
        return new LockedAdvisor(beans, () -> {
            LockstepProperties properties = beans.getBean(LockstepProperties.class);
            return new LockedDefaults(
                    properties.leaseOptions(), properties.getLocked().getWhenHeld());
        });
    }

    /** Registers an auto-proxy creator if none is, and makes it proxy classes. */
    static final class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {
        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
            AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
        }
    }
}
