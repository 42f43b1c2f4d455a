package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.metrics.LockMetrics;
import io.lockstep.metrics.MicrometerLockMetrics;
import io.lockstep.metrics.ObservedLockProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;

class LockstepObservabilityTest {

    private static final LeaseOptions TEN_SECONDS = LeaseOptions.of(Duration.ofSeconds(10));

    @Test
    @DisplayName("with an ObservationRegistry, every acquire is observed under the provider's name")
    void observationsWhenARegistryExists() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2(), "lockstep.providers.orders.uri=" + Starter.h2())
                .withBean(ObservationRegistry.class, () -> observations)
                .run(context -> {
                    try (Lease lease = context.getBean("ordersLockstepProvider", LockProvider.class)
                            .tryAcquire("order-1", TEN_SECONDS)
                            .orElseThrow()) {
                        assertThat(lease.isValid()).isTrue();
                    }
                    TestObservationRegistryAssert.assertThat(observations)
                            .hasObservationWithNameEqualTo(ObservedLockProvider.ACQUIRE)
                            .that()
                            .hasLowCardinalityKeyValue(ObservedLockProvider.PROVIDER_KEY, "orders")
                            .hasLowCardinalityKeyValue(ObservedLockProvider.BACKEND_KEY, "jdbc")
                            .hasLowCardinalityKeyValue(ObservedLockProvider.OUTCOME_KEY, "acquired")
                            .hasHighCardinalityKeyValue(ObservedLockProvider.LOCK_NAME_KEY, "order-1");
                });
    }

    @Test
    @DisplayName("no observations with lockstep.observations=false, without a registry, or without the library")
    void noObservations() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2(), "lockstep.observations=false")
                .withBean(ObservationRegistry.class, () -> observations)
                .run(context -> {
                    context.getBean(LockProvider.class)
                            .tryAcquire("x", TEN_SECONDS)
                            .ifPresent(Lease::close);
                    TestObservationRegistryAssert.assertThat(observations).doesNotHaveAnyObservation();
                });
        Starter.runner().withPropertyValues("lockstep.uri=" + Starter.h2()).run(context -> {
            assertThat(context).doesNotHaveBean(ObservationRegistry.class);
            context.getBean(LockProvider.class).tryAcquire("x", TEN_SECONDS).ifPresent(Lease::close);
        });
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withClassLoader(new FilteredClassLoader(ObservationRegistry.class))
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean("lockstepObservations");
                    context.getBean(LockProvider.class)
                            .tryAcquire("x", TEN_SECONDS)
                            .ifPresent(Lease::close);
                });
    }

    @Test
    @DisplayName("with a MeterRegistry, Lockstep's meters count the provider's acquires")
    void metersWhenARegistryExists() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withBean(MeterRegistry.class, () -> meters)
                .run(context -> {
                    assertThat(context.getBean(LockMetrics.class)).isInstanceOf(MicrometerLockMetrics.class);
                    context.getBean(LockProvider.class)
                            .tryAcquire("x", TEN_SECONDS)
                            .ifPresent(Lease::close);
                    assertThat(meters.get("lockstep.acquire.attempts").counter().count())
                            .isEqualTo(1);
                });
    }

    @Test
    @DisplayName("no meters with lockstep.metrics=false, and no meter binding without micrometer-core")
    void noMeters() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2(), "lockstep.metrics=false")
                .withBean(MeterRegistry.class, () -> meters)
                .run(context -> {
                    assertThat(context).doesNotHaveBean(LockMetrics.class);
                    context.getBean(LockProvider.class)
                            .tryAcquire("x", TEN_SECONDS)
                            .ifPresent(Lease::close);
                    assertThat(meters.find("lockstep.acquire.attempts").counter())
                            .isNull();
                });
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withClassLoader(new FilteredClassLoader(MeterRegistry.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockMetrics.class));
    }
}
