package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.LockProvider;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
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
    HealthProbes lockstepHealthProbes(Map<String, LockProvider> providers) {
        return new HealthProbes(providers.size());
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
     * At most one thread per provider, by construction: each indicator keeps at most one probe in flight
     * (a check that finds the previous probe still running reports DOWN without submitting another), so
     * the queue never holds more than one probe per provider either, however long a backend hangs. Idle
     * threads end after a minute.
     */
    static final class HealthProbes implements AutoCloseable {
        private final ExecutorService executor;

        HealthProbes(int providers) {
            AtomicInteger counter = new AtomicInteger();
            int threads = Math.max(1, providers);
            ThreadPoolExecutor pool = new ThreadPoolExecutor(
                    threads, threads, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(), runnable -> {
                        Thread thread = new Thread(runnable, "lockstep-health-" + counter.incrementAndGet());
                        thread.setDaemon(true);
                        return thread;
                    });
            pool.allowCoreThreadTimeOut(true);
            this.executor = pool;
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
