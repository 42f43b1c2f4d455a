package io.lockstep.metrics;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.LockTimeoutException;
import io.lockstep.LossReason;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.TestBackend;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class ObservedLockProviderTest {

    private static final LeaseOptions TEN_SECONDS = LeaseOptions.of(Duration.ofSeconds(10));

    private final TestObservationRegistry registry = TestObservationRegistry.create();
    private final LockProvider raw = new BackendLockProvider<>(new TestBackend(), LockRuntime.defaults());
    private final ObservedLockProvider observed = ObservedLockProvider.observe(raw, registry, "orders");
    private final List<Observation.Context> started = new CopyOnWriteArrayList<>();
    private final Set<Observation.Context> stopped = ConcurrentHashMap.newKeySet();

    ObservedLockProviderTest() {
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStart(Observation.Context context) {
                started.add(context);
            }

            @Override
            public void onStop(Observation.Context context) {
                stopped.add(context);
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
    }

    @AfterEach
    void close() {
        observed.close();
    }

    @Test
    @DisplayName(
            "an acquire is one observation tagged with provider, backend, tier and outcome; the lock name is high-cardinality")
    void acquireIsObserved() {
        try (Lease lease = observed.tryAcquire("invoice-7", TEN_SECONDS).orElseThrow()) {
            assertThat(registry)
                    .hasObservationWithNameEqualTo(ObservedLockProvider.ACQUIRE)
                    .that()
                    .hasBeenStarted()
                    .hasBeenStopped()
                    .hasLowCardinalityKeyValue(ObservedLockProvider.PROVIDER_KEY, "orders")
                    .hasLowCardinalityKeyValue(
                            ObservedLockProvider.BACKEND_KEY, raw.info().name())
                    .hasLowCardinalityKeyValue(
                            ObservedLockProvider.TIER_KEY, raw.info().tier().name())
                    .hasLowCardinalityKeyValue(ObservedLockProvider.OUTCOME_KEY, "acquired")
                    .hasHighCardinalityKeyValue(ObservedLockProvider.LOCK_NAME_KEY, "invoice-7")
                    .doesNotHaveLowCardinalityKeyValueWithKey(ObservedLockProvider.LOCK_NAME_KEY);
        }
    }

    @Test
    @DisplayName("a lock held by someone else is outcome not-acquired, for tryAcquire and for acquire")
    void heldLockIsNotAcquired() {
        try (Lease held = raw.tryAcquire("busy", TEN_SECONDS).orElseThrow()) {
            assertThat(observed.tryAcquire("busy", TEN_SECONDS)).isEmpty();
            assertThatThrownBy(() -> observed.acquire("busy", TEN_SECONDS)).isInstanceOf(LockTimeoutException.class);
            assertThat(started)
                    .extracting(c -> c.getLowCardinalityKeyValue(ObservedLockProvider.OUTCOME_KEY)
                            .getValue())
                    .containsExactly("not-acquired", "not-acquired");
        }
    }

    @Test
    @DisplayName("a failing acquire is outcome error and records the error")
    void failingAcquireIsAnError() {
        assertThatThrownBy(() -> observed.tryAcquire("", TEN_SECONDS)).isInstanceOf(IllegalArgumentException.class);
        assertThat(registry)
                .hasSingleObservationThat()
                .hasLowCardinalityKeyValue(ObservedLockProvider.OUTCOME_KEY, "error")
                .assertThatError()
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("a lease is an observation from grant to release, ended RELEASED, without a lost event")
    void leaseIsObservedUntilReleased() throws Exception {
        Lease lease = observed.tryAcquire("report", TEN_SECONDS).orElseThrow();
        LockObservationContext context = leaseContext();
        assertThat(context.endReason()).isEmpty();
        lease.release();
        lease.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        awaitStopped(context);
        assertThat(context.endReason()).contains(LossReason.RELEASED);
        assertThat(context.getLowCardinalityKeyValue(ObservedLockProvider.END_KEY)
                        .getValue())
                .isEqualTo("RELEASED");
        assertThat(context.getHighCardinalityKeyValue(ObservedLockProvider.FENCE_KEY))
                .isNotNull();
        assertThat(registry)
                .hasObservationWithNameEqualTo(ObservedLockProvider.LEASE)
                .that()
                .doesNotHaveEvent(ObservedLockProvider.LOST_EVENT);
    }

    @Test
    @DisplayName("a lease that runs out gets the lost event with its reason")
    void lostLeaseGetsAnEvent() throws Exception {
        Lease lease = observed.tryAcquire("short", LeaseOptions.of(Duration.ofMillis(200)))
                .orElseThrow();
        assertThat(lease.lost().toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo(LossReason.EXPIRED);
        LockObservationContext context = leaseContext();
        awaitStopped(context);
        assertThat(registry)
                .hasObservationWithNameEqualTo(ObservedLockProvider.LEASE)
                .that()
                .hasLowCardinalityKeyValue(ObservedLockProvider.END_KEY, "EXPIRED")
                .hasEvent(ObservedLockProvider.LOST_EVENT, "lease lost: EXPIRED");
        lease.close();
    }

    @Test
    @DisplayName("the lease is a child of the observation current at acquire")
    void leaseHasTheCallersParent() {
        Observation caller = Observation.start("job", registry);
        try (Observation.Scope ignored = caller.openScope();
                Lease lease = observed.tryAcquire("nested", TEN_SECONDS).orElseThrow()) {
            assertThat(leaseContext().getParentObservation()).isSameAs(caller);
        } finally {
            caller.stop();
        }
    }

    @Test
    @DisplayName("with a meter handler, a held lease shows in the long-task timer lockstep.lease.active")
    void holdIsALongTaskTimer() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ObservationRegistry withMeters = ObservationRegistry.create();
        withMeters.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        try (LockProvider metered = ObservedLockProvider.observe(
                new BackendLockProvider<>(new TestBackend(), LockRuntime.defaults()), withMeters, "m")) {
            Lease lease = metered.tryAcquire("held", TEN_SECONDS).orElseThrow();
            LongTaskTimer active = meters.get("lockstep.lease.active").longTaskTimer();
            assertThat(active.activeTasks()).isEqualTo(1);
            lease.release();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (active.activeTasks() != 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(active.activeTasks()).isZero();
            assertThat(meters.get("lockstep.lease").timer().count()).isEqualTo(1);
            assertThat(meters.get("lockstep.acquire")
                            .tag(ObservedLockProvider.OUTCOME_KEY, "acquired")
                            .timer()
                            .count())
                    .isEqualTo(1);
        }
    }

    private LockObservationContext leaseContext() {
        return started.stream()
                .filter(c -> ObservedLockProvider.LEASE.equals(c.getName()))
                .map(LockObservationContext.class::cast)
                .findFirst()
                .orElseThrow();
    }

    private void awaitStopped(LockObservationContext context) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!stopped.contains(context) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(stopped).as("stopped observations").contains(context);
    }
}
