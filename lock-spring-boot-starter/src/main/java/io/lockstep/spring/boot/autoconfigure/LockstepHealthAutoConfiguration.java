package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.LockProvider;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.context.annotation.Bean;

/**
 * One {@link LockProviderHealthIndicator} per {@link LockProvider} bean, as the health contributor
 * {@code lockstep} (a composite keyed by bean name when there are several). Needs {@code
 * spring-boot-health}; off with {@code management.health.lockstep.enabled=false}.
 */
@AutoConfiguration(after = LockstepAutoConfiguration.class)
// By name: on Boot 3 this class is absent, and a class literal is only safe where Boot reads the annotation
// from bytecode (an application), not where the configuration class is loaded and reflected on (tests).
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
@ConditionalOnBean(LockProvider.class)
@ConditionalOnEnabledHealthIndicator("lockstep")
public final class LockstepHealthAutoConfiguration {

    /** Daemon threads for the probes, so a hung backend never holds a request thread or the shutdown. */
    @Bean(destroyMethod = "close")
    HealthProbes lockstepHealthProbes() {
        return new HealthProbes();
    }

    @Bean
    @ConditionalOnMissingBean(name = "lockstepHealthContributor")
    HealthContributor lockstepHealthContributor(
            Map<String, LockProvider> providers, LockstepProperties properties, HealthProbes probes) {
        Map<String, LockProviderHealthIndicator> indicators = new LinkedHashMap<>();
        providers.forEach((name, provider) -> indicators.put(
                name,
                new LockProviderHealthIndicator(provider, properties.getHealth().getTimeout(), probes.executor())));
        if (indicators.size() == 1) {
            return indicators.values().iterator().next();
        }
        return CompositeHealthContributor.fromMap(indicators);
    }

    /**
     * The threads health probes run on; its own type, so it is never injected as an application's executor.
     * A cached pool, yet bounded: each indicator keeps at most one probe in flight (a check that finds the
     * previous probe still running reports DOWN without submitting another), so there are never more
     * threads than providers, however long a backend hangs.
     */
    static final class HealthProbes implements AutoCloseable {
        private final ExecutorService executor;

        HealthProbes() {
            AtomicInteger counter = new AtomicInteger();
            this.executor = Executors.newCachedThreadPool(runnable -> {
                Thread thread = new Thread(runnable, "lockstep-health-" + counter.incrementAndGet());
                thread.setDaemon(true);
                return thread;
            });
        }

        ExecutorService executor() {
            return executor;
        }

        @Override
        public void close() {
            executor.shutdownNow();
        }
    }
}
