package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.LockProvider;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.AnnotationMetadata;

/**
 * The health contributor {@code lockstep} on Spring Boot 3 (3.5), whose health types live in the
 * actuator ({@code org.springframework.boot.actuate.health}) rather than in Boot 4's {@code
 * spring-boot-health}: the same check as {@link LockProviderHealthIndicator}, one per {@link LockProvider}
 * bean (a composite keyed by bean name when there are several).
 *
 * <p>This module compiles against Boot 4 only, so Boot 3's types are reached by name: the indicator is a
 * {@link Proxy} of Boot 3's {@code HealthIndicator} and its {@code Health} is built through Boot 3's
 * public builder ({@code Health.up()/down().withDetails(..).build()}); the {@code lock-spring-boot-starter/boot3}
 * test module checks it on a real Boot 3.5 actuator. Off with {@code management.health.lockstep.enabled=false}
 * or {@code management.health.defaults.enabled=false}, as Boot 3's own indicators.
 */
@AutoConfiguration(after = LockstepAutoConfiguration.class)
@ConditionalOnClass(name = LockstepBoot3HealthAutoConfiguration.BOOT3_HEALTH_INDICATOR)
@ConditionalOnMissingClass("org.springframework.boot.health.contributor.HealthIndicator")
@ConditionalOnBean(LockProvider.class)
@Conditional(LockstepBoot3HealthAutoConfiguration.OnEnabledHealthIndicator.class)
@Import(LockstepBoot3HealthAutoConfiguration.ContributorRegistrar.class)
public final class LockstepBoot3HealthAutoConfiguration {

    static final String BOOT3_HEALTH = "org.springframework.boot.actuate.health.";
    static final String BOOT3_HEALTH_INDICATOR = BOOT3_HEALTH + "HealthIndicator";
    private static final String CONTRIBUTOR_BEAN = "lockstepHealthContributor";
    private static final String FACTORY_BEAN = "lockstepBoot3HealthContributors";

    @Bean(destroyMethod = "close")
    LockstepHealthAutoConfiguration.HealthProbes lockstepHealthProbes(Map<String, LockProvider> providers) {
        return new LockstepHealthAutoConfiguration.HealthProbes(providers.size());
    }

    @Bean(FACTORY_BEAN)
    Contributors lockstepBoot3HealthContributors(
            Map<String, LockProvider> providers,
            LockstepProperties properties,
            LockstepHealthAutoConfiguration.HealthProbes probes) {
        Map<String, ProviderHealthCheck> checks = new LinkedHashMap<>();
        providers.forEach((name, provider) -> checks.put(
                name, new ProviderHealthCheck(provider, properties.getHealth().getTimeout(), probes.executor())));
        return new Contributors(checks, Boot3Health.load(LockstepBoot3HealthAutoConfiguration.class.getClassLoader()));
    }

    /**
     * Builds the Boot 3 contributor. Its bean is declared by {@link ContributorRegistrar} with Boot 3's
     * {@code HealthContributor} as target type, so Boot's {@code getBeansOfType(HealthContributor.class)}
     * finds it before it is created.
     */
    static final class Contributors {
        private final Map<String, ProviderHealthCheck> checks;
        private final Boot3Health boot3;

        Contributors(Map<String, ProviderHealthCheck> checks, Boot3Health boot3) {
            this.checks = checks;
            this.boot3 = boot3;
        }

        /** Boot 3's {@code HealthIndicator} for one provider, or a {@code CompositeHealthContributor}. */
        Object contributor() {
            Map<String, Object> indicators = new LinkedHashMap<>();
            checks.forEach((name, check) -> indicators.put(name, boot3.indicator(name, check)));
            if (indicators.size() == 1) {
                return indicators.values().iterator().next();
            }
            return boot3.composite(indicators);
        }
    }

    /** Boot 3's health types and the few methods used, looked up once. */
    record Boot3Health(
            Class<?> indicatorType,
            Class<?> contributorType,
            Method up,
            Method down,
            Method withDetails,
            Method build,
            Method fromMap) {

        static Boot3Health load(ClassLoader loader) {
            try {
                Class<?> health = Class.forName(BOOT3_HEALTH + "Health", false, loader);
                Class<?> builder = Class.forName(BOOT3_HEALTH + "Health$Builder", false, loader);
                Class<?> composite = Class.forName(BOOT3_HEALTH + "CompositeHealthContributor", false, loader);
                return new Boot3Health(
                        Class.forName(BOOT3_HEALTH_INDICATOR, false, loader),
                        Class.forName(BOOT3_HEALTH + "HealthContributor", false, loader),
                        health.getMethod("up"),
                        health.getMethod("down"),
                        builder.getMethod("withDetails", Map.class),
                        builder.getMethod("build"),
                        composite.getMethod("fromMap", Map.class));
            } catch (ClassNotFoundException | NoSuchMethodException e) {
                throw new IllegalStateException(
                        "Lockstep's health check does not know this Spring Boot 3 actuator: " + e, e);
            }
        }

        Object indicator(String name, ProviderHealthCheck check) {
            InvocationHandler handler = (proxy, method, args) -> switch (method.getName()) {
                case "health" -> health(check.check());
                case "toString" -> "LockProviderHealthIndicator[" + name + "]";
                case "hashCode" -> System.identityHashCode(proxy);
                case "equals" -> proxy == args[0];
                default -> {
                    if (method.isDefault()) {
                        yield InvocationHandler.invokeDefault(proxy, method, args);
                    }
                    throw new UnsupportedOperationException(method.toString());
                }
            };
            return Proxy.newProxyInstance(indicatorType.getClassLoader(), new Class<?>[] {indicatorType}, handler);
        }

        Object health(ProviderHealthCheck.Result result) {
            Object builder = invoke(result.up() ? up : down, null);
            invoke(withDetails, builder, result.details());
            return invoke(build, builder);
        }

        Object composite(Map<String, Object> indicators) {
            return invoke(fromMap, null, indicators);
        }

        private static Object invoke(Method method, Object target, Object... args) {
            try {
                return method.invoke(target, args);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof RuntimeException runtime) {
                    throw runtime;
                }
                throw new IllegalStateException(e.getCause());
            }
        }
    }

    /** Declares {@code lockstepHealthContributor} with Boot 3's type, unless the application has one. */
    static final class ContributorRegistrar implements ImportBeanDefinitionRegistrar, BeanClassLoaderAware {
        private ClassLoader loader = ContributorRegistrar.class.getClassLoader();

        @Override
        public void setBeanClassLoader(ClassLoader classLoader) {
            this.loader = classLoader;
        }

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            if (registry.containsBeanDefinition(CONTRIBUTOR_BEAN)) {
                return;
            }
            RootBeanDefinition definition = new RootBeanDefinition();
            try {
                definition.setTargetType(Class.forName(BOOT3_HEALTH + "HealthContributor", false, loader));
            } catch (ClassNotFoundException e) {
                return; // not Boot 3 after all: the class condition above keeps this from happening
            }
            definition.setFactoryBeanName(FACTORY_BEAN);
            definition.setFactoryMethodName("contributor");
            registry.registerBeanDefinition(CONTRIBUTOR_BEAN, definition);
        }
    }

    /** Boot 3's {@code @ConditionalOnEnabledHealthIndicator("lockstep")}, which Boot 4 does not have. */
    static final class OnEnabledHealthIndicator implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            Boolean defaults = context.getEnvironment()
                    .getProperty("management.health.defaults.enabled", Boolean.class, Boolean.TRUE);
            return context.getEnvironment().getProperty("management.health.lockstep.enabled", Boolean.class, defaults);
        }
    }
}
