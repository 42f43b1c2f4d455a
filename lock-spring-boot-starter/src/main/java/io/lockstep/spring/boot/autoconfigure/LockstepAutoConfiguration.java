package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.metrics.LockMetrics;
import io.lockstep.metrics.MicrometerLockMetrics;
import io.lockstep.metrics.ObservedLockProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.function.BiFunction;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * Lockstep providers from {@code lockstep.*}: the default {@code lockstepProvider} from {@code lockstep.uri}
 * (unless the application defines its own {@link LockProvider}), one per {@code
 * lockstep.providers.<name>.uri}, the shared {@link LockRuntime}, Micrometer meters when a {@link
 * MeterRegistry} exists and observations when an {@link ObservationRegistry} does. Providers close when
 * the context closes, after the beans that use them.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"
        })
@ConditionalOnClass(LockProvider.class)
@EnableConfigurationProperties(LockstepProperties.class)
@Import(NamedLockProvidersRegistrar.class)
public final class LockstepAutoConfiguration {

    /** The runtime shared by every provider the starter opens, with the {@code lockstep.runtime.*} bounds. */
    @Bean
    @ConditionalOnMissingBean
    LockRuntime lockstepRuntime(LockstepProperties properties, ObjectProvider<LockMetrics> metrics) {
        return properties
                .runtimeBuilder()
                .metrics(metrics.getIfUnique(() -> LockMetrics.NOOP))
                .build();
    }

    @Bean
    @ConditionalOnMissingBean
    LockProviderOpener lockstepProviderOpener(
            LockRuntime runtime, LockstepProperties properties, ObjectProvider<ProviderDecorator> decorators) {
        BiFunction<LockProvider, String, LockProvider> decorate = (provider, name) -> {
            LockProvider result = provider;
            for (ProviderDecorator decorator : decorators.orderedStream().toList()) {
                result = decorator.decorate(result, name);
            }
            return result;
        };
        return new LockProviderOpener(runtime, decorate, properties);
    }

    /**
     * The default provider, from {@code lockstep.uri}. Not named {@code lockProvider}: that is the name
     * ShedLock's guide gives its own provider bean.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LockProvider.class)
    @ConditionalOnProperty("lockstep.uri")
    LockProvider lockstepProvider(LockProviderOpener opener, LockstepProperties properties) {
        return opener.open("default", "lockstep.uri", properties.getUri());
    }

    /** Wraps each provider the starter opens; how observations are added. */
    @FunctionalInterface
    interface ProviderDecorator {
        LockProvider decorate(LockProvider provider, String name);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBooleanProperty(name = "lockstep.metrics", matchIfMissing = true)
    static final class MeterConfiguration {
        /** Lockstep's meters in the application's MeterRegistry, if it has exactly one. */
        @Bean
        @ConditionalOnMissingBean
        LockMetrics lockstepMetrics(ObjectProvider<MeterRegistry> registry) {
            MeterRegistry meters = registry.getIfUnique();
            return meters == null ? LockMetrics.NOOP : new MicrometerLockMetrics(meters);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBooleanProperty(name = "lockstep.observations", matchIfMissing = true)
    static final class ObservationConfiguration {
        /** An observation per acquire and per lease, if the application has an ObservationRegistry. */
        @Bean
        ProviderDecorator lockstepObservations(ObjectProvider<ObservationRegistry> registry) {
            return (provider, name) -> {
                ObservationRegistry observations = registry.getIfUnique();
                return observations == null || observations.isNoop()
                        ? provider
                        : ObservedLockProvider.observe(provider, observations, name);
            };
        }
    }
}
