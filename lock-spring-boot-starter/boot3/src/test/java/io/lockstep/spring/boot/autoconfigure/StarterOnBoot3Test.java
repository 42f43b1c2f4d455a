package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.metrics.ObservedLockProvider;
import io.lockstep.spring.boot.CurrentLease;
import io.lockstep.spring.boot.Locked;
import io.lockstep.spring.boot.ManagedLockProvider;
import io.lockstep.tck.servers.RedisServer;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthContributor;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.SpringVersion;

/**
 * The starter, built against Boot 4, in a Spring Boot 3.5 application (in the starter's package, to reach
 * its failure analyzer) (Framework 6.2, Boot 3's actuator):
 * the provider bean, backing off, start-up failures in Lockstep's words, health through Boot 3's types,
 * {@code @Locked} and observations.
 */
class StarterOnBoot3Test {

    private static final String SECRET = "s3cr3t-Pa55";
    private static final LeaseOptions TEN_SECONDS = LeaseOptions.of(Duration.ofSeconds(10));

    /** Every auto-configuration the starter lists, as Boot 3 would import them. */
    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        LockstepAutoConfiguration.class,
                        LockstepLockedAutoConfiguration.class,
                        LockstepHealthAutoConfiguration.class,
                        LockstepBoot3HealthAutoConfiguration.class,
                        LockstepActuatorAutoConfiguration.class,
                        LockstepAdaptersAutoConfiguration.class));
    }

    private static String h2() {
        return "jdbc:h2:mem:db-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1?user=sa&password=" + SECRET
                + "&createSchema=true";
    }

    @Test
    @DisplayName("this module runs on Spring Boot 3.5 and Spring Framework 6.2")
    void runsOnBoot3() {
        assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
        assertThat(SpringVersion.getVersion()).startsWith("6.2.");
    }

    @Nested
    @DisplayName("the provider bean")
    class ProviderBean {

        @Test
        @DisplayName("lockstep.uri opens a provider named default that takes real locks")
        void uriOpensAProvider() {
            runner().withPropertyValues("lockstep.uri=" + h2()).run(context -> {
                assertThat(context).hasSingleBean(LockProvider.class);
                LockProvider locks = context.getBean(LockProvider.class);
                assertThat(((ManagedLockProvider) locks).name()).isEqualTo("default");
                try (Lease lease = locks.tryAcquire("a", TEN_SECONDS).orElseThrow()) {
                    assertThat(lease.isValid()).isTrue();
                    assertThat(locks.tryAcquire("a", TEN_SECONDS)).isEmpty();
                }
            });
        }

        @Test
        @DisplayName("backs off when the application defines its own provider")
        void backsOff() {
            runner().withPropertyValues("lockstep.uri=" + h2())
                    .withUserConfiguration(OwnProvider.class)
                    .run(context -> {
                        assertThat(context).hasSingleBean(LockProvider.class);
                        assertThat(context.getBean(LockProvider.class)).isNotInstanceOf(ManagedLockProvider.class);
                    });
        }

        @Test
        @DisplayName(
                "a scheme no module serves fails start-up naming the property and the artifact, never the password")
        void badUri() {
            runner().withPropertyValues("lockstep.uri=etcd://root:" + SECRET + "@127.0.0.1:2379")
                    .run(context -> {
                        assertThat(context).hasFailed();
                        Throwable failure = context.getStartupFailure();
                        assertThat(messages(failure))
                                .contains("lockstep.uri: no Lockstep provider for scheme 'etcd'")
                                .contains("io.lockstep:lock-etcd")
                                .doesNotContain(SECRET);
                        FailureAnalysis analysis = new LockstepFailureAnalyzer().analyze(failure);
                        assertThat(analysis.getAction()).contains("lockstep.uri");
                    });
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnProvider {
        @Bean(destroyMethod = "close")
        LockProvider myLocks() {
            return Locks.open(h2());
        }
    }

    @Nested
    @DisplayName("health through Boot 3's actuator types")
    class BootThreeHealth {

        @Test
        @DisplayName("a reachable backend is a Boot 3 HealthIndicator, UP with its details and no secret")
        void up() {
            runner().withPropertyValues("lockstep.uri=" + h2()).run(context -> {
                assertThat(context).hasNotFailed();
                HealthIndicator indicator = (HealthIndicator) context.getBean("lockstepHealthContributor");
                assertThat(context.getBeansOfType(HealthContributor.class)).containsKey("lockstepHealthContributor");
                Health health = indicator.health();
                assertThat(health.getStatus()).isEqualTo(Status.UP);
                assertThat(health.getDetails())
                        .containsEntry("backend", "jdbc")
                        .containsEntry("tier", "TRANSACTIONAL")
                        .containsEntry("liveLeases", 0)
                        .containsKey("probe");
                assertThat(health.toString()).doesNotContain(SECRET);
                assertThat(indicator.getHealth(false).getDetails()).isEmpty();
            });
        }

        @Test
        @DisplayName("several providers are one composite, keyed by bean name")
        void composite() {
            runner().withPropertyValues("lockstep.uri=" + h2(), "lockstep.providers.orders.uri=" + h2())
                    .run(context -> {
                        CompositeHealthContributor all =
                                (CompositeHealthContributor) context.getBean("lockstepHealthContributor");
                        HealthContributor orders = all.getContributor("ordersLockstepProvider");
                        assertThat(((HealthIndicator) orders).health().getStatus())
                                .isEqualTo(Status.UP);
                        assertThat(all.getContributor("lockstepProvider")).isNotNull();
                    });
        }

        @Test
        @DisplayName("a backend that is gone is DOWN with Lockstep's reason, naming the address")
        void down() {
            RedisServer redis = RedisServer.start();
            try {
                runner().withPropertyValues("lockstep.uri=" + redis.uri() + "?timeout=1s")
                        .run(context -> {
                            HealthIndicator indicator = (HealthIndicator) context.getBean("lockstepHealthContributor");
                            redis.kill();
                            Health health = indicator.health();
                            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                            while (!Status.DOWN.equals(health.getStatus()) && System.nanoTime() < deadline) {
                                Thread.sleep(100);
                                health = indicator.health();
                            }
                            assertThat(health.getStatus()).as(health.toString()).isEqualTo(Status.DOWN);
                            assertThat(health.getDetails().get("error").toString())
                                    .contains("BackendUnavailableException")
                                    .contains(Integer.toString(redis.port()));
                        });
            } finally {
                redis.close();
            }
        }

        @Test
        @DisplayName("no contributor when disabled, by default switch, without a provider, or without the actuator")
        void conditions() {
            runner().withPropertyValues("lockstep.uri=" + h2(), "management.health.lockstep.enabled=false")
                    .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("lockstepHealthContributor"));
            runner().withPropertyValues("lockstep.uri=" + h2(), "management.health.defaults.enabled=false")
                    .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("lockstepHealthContributor"));
            runner().run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("lockstepHealthContributor"));
            runner().withPropertyValues("lockstep.uri=" + h2())
                    .withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                    .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("lockstepHealthContributor"));
        }

        @Test
        @DisplayName(
                "a native image gets hints for the indicator's JDK proxy and the health builder it calls by reflection")
        void nativeHints() throws NoSuchMethodException {
            RuntimeHints hints = new RuntimeHints();
            new LockstepRuntimeHints().registerHints(hints, getClass().getClassLoader());
            assertThat(RuntimeHintsPredicates.proxies().forInterfaces(HealthIndicator.class))
                    .accepts(hints);
            assertThat(RuntimeHintsPredicates.reflection().onMethod(Health.class, "up"))
                    .accepts(hints);
            assertThat(RuntimeHintsPredicates.reflection().onMethod(Health.Builder.class, "withDetails"))
                    .accepts(hints);
            assertThat(RuntimeHintsPredicates.reflection()
                            .onMethod(CompositeHealthContributor.class.getMethod("fromMap", Map.class)))
                    .accepts(hints);
        }

        @Test
        @DisplayName("the application's own lockstepHealthContributor wins")
        void applicationsOwn() {
            runner().withPropertyValues("lockstep.uri=" + h2())
                    .withBean(
                            "lockstepHealthContributor",
                            HealthIndicator.class,
                            () -> () -> Health.unknown().build())
                    .run(context -> assertThat(((HealthIndicator) context.getBean("lockstepHealthContributor"))
                                    .health()
                                    .getStatus())
                            .isEqualTo(Status.UNKNOWN));
        }
    }

    /** A bean with a @Locked method; records what it saw (read through methods: it is a class proxy). */
    static class Jobs {
        private final List<Optional<Lease>> seen = new ArrayList<>();
        private volatile boolean heldElsewhere;

        @Locked(name = "report-#{#day}")
        synchronized String report(String day, LockProvider probe) {
            seen.add(CurrentLease.get());
            heldElsewhere = probe.tryAcquire("report-" + day, TEN_SECONDS).isEmpty();
            return "done " + day;
        }

        synchronized List<Optional<Lease>> seen() {
            return List.copyOf(seen);
        }

        boolean heldElsewhere() {
            return heldElsewhere;
        }
    }

    @Test
    @DisplayName("@Locked runs the method under a lease named from its arguments, skips while it is held elsewhere")
    void lockedMethods() {
        runner().withPropertyValues("lockstep.uri=" + h2()).withBean(Jobs.class).run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            LockProvider locks = context.getBean(LockProvider.class);
            assertThat(jobs.report("monday", locks)).isEqualTo("done monday");
            assertThat(jobs.heldElsewhere()).isTrue();
            assertThat(jobs.seen()).hasSize(1);
            assertThat(jobs.seen().get(0))
                    .hasValueSatisfying(lease -> assertThat(lease.name()).isEqualTo("report-monday"));
            try (Lease held = locks.tryAcquire("report-tuesday", TEN_SECONDS).orElseThrow()) {
                assertThat(jobs.report("tuesday", locks))
                        .as("skipped: held elsewhere")
                        .isNull();
            }
            assertThat(jobs.seen()).hasSize(1);
        });
    }

    @Test
    @DisplayName("with an ObservationRegistry, every acquire is observed with low-cardinality tags")
    void observations() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        runner().withPropertyValues("lockstep.uri=" + h2())
                .withBean(ObservationRegistry.class, () -> observations)
                .run(context -> {
                    context.getBean(LockProvider.class)
                            .tryAcquire("order-1", TEN_SECONDS)
                            .orElseThrow()
                            .close();
                    TestObservationRegistryAssert.assertThat(observations)
                            .hasObservationWithNameEqualTo(ObservedLockProvider.ACQUIRE)
                            .that()
                            .hasLowCardinalityKeyValue(ObservedLockProvider.PROVIDER_KEY, "default")
                            .hasLowCardinalityKeyValue(ObservedLockProvider.BACKEND_KEY, "jdbc")
                            .hasLowCardinalityKeyValue(ObservedLockProvider.OUTCOME_KEY, "acquired")
                            .hasHighCardinalityKeyValue(ObservedLockProvider.LOCK_NAME_KEY, "order-1");
                });
    }

    private static String messages(Throwable failure) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            all.append(t).append('\n');
        }
        return all.toString();
    }
}
