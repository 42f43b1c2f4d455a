package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LossReason;
import io.lockstep.metrics.ObservedLockProvider;
import io.lockstep.spring.boot.Locked;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The spans a user sees in Zipkin or an OpenTelemetry backend: the starter's observations through
 * Micrometer Tracing's own handler (into a {@link SimpleTracer}), beside Boot's meter handler, wired as
 * Boot wires them. Lock names are span tags (high cardinality) but never meter tags.
 */
class LockstepTracingTest {

    /** The longest a test waits for a lease's span to end after its loss signal; never reached when green. */
    private static final long WAIT_MILLIS = TimeUnit.SECONDS.toMillis(30);

    private final SimpleTracer tracer = new SimpleTracer();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final ObservationRegistry observations = tracedRegistry();

    private ObservationRegistry tracedRegistry() {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig()
                .observationHandler(new DefaultMeterObservationHandler(meters))
                .observationHandler(new DefaultTracingObservationHandler(tracer));
        return registry;
    }

    /** A scheduled-style job under @Locked. */
    static class Reports {
        private final AtomicInteger runs = new AtomicInteger();

        @Locked(name = "daily-report-#{#day}")
        void run(String day) {
            runs.incrementAndGet();
        }

        int runs() {
            return runs.get();
        }
    }

    @Test
    @DisplayName(
            "a @Locked call inside a request's span makes an acquire span and, under it, a lease span in the request's trace")
    void lockedCallMakesChildSpans() {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withBean(ObservationRegistry.class, () -> observations)
                .withBean(Reports.class)
                .run(context -> {
                    Reports reports = context.getBean(Reports.class);
                    Observation request = Observation.start("http.server.requests", observations);
                    try (Observation.Scope ignored = request.openScope()) {
                        reports.run("2026-11-27");
                    } finally {
                        request.stop();
                    }
                    assertThat(reports.runs()).isEqualTo(1);

                    SimpleSpan requestSpan = endedSpan("http.server.requests");
                    SimpleSpan acquire = endedSpan(ObservedLockProvider.ACQUIRE);
                    SimpleSpan lease = endedSpan(ObservedLockProvider.LEASE);
                    String spans = tracer.getSpans().stream()
                            .map(span -> span.getName() + " " + span.getSpanId() + " <- " + span.getParentId())
                            .toList()
                            .toString();
                    for (SimpleSpan span : List.of(acquire, lease)) {
                        assertThat(span.getTraceId()).as(spans).isEqualTo(requestSpan.getTraceId());
                    }
                    // request -> acquire -> lease: the lease starts while the acquire is in scope, and Micrometer
                    // Tracing parents a new span on the span in scope (the README says so).
                    assertThat(acquire.getParentId()).as(spans).isEqualTo(requestSpan.getSpanId());
                    assertThat(lease.getParentId()).as(spans).isEqualTo(acquire.getSpanId());
                    assertThat(acquire.getTags())
                            .containsEntry(ObservedLockProvider.PROVIDER_KEY, "default")
                            .containsEntry(ObservedLockProvider.BACKEND_KEY, "jdbc")
                            .containsEntry(ObservedLockProvider.TIER_KEY, "TRANSACTIONAL")
                            .containsEntry(ObservedLockProvider.OUTCOME_KEY, "acquired")
                            .containsEntry(ObservedLockProvider.LOCK_NAME_KEY, "daily-report-2026-11-27");
                    assertThat(lease.getTags())
                            .containsEntry(ObservedLockProvider.LOCK_NAME_KEY, "daily-report-2026-11-27")
                            .containsEntry(ObservedLockProvider.END_KEY, "RELEASED")
                            .containsKey(ObservedLockProvider.FENCE_KEY);
                    assertThat(lease.getEvents())
                            .as("a released lease is no loss")
                            .isEmpty();

                    // The same observation as a meter: low-cardinality tags only, never the lock name.
                    assertThat(meters.get(ObservedLockProvider.ACQUIRE)
                                    .timer()
                                    .getId()
                                    .getTags())
                            .extracting(Tag::getKey)
                            .contains(
                                    ObservedLockProvider.PROVIDER_KEY,
                                    ObservedLockProvider.BACKEND_KEY,
                                    ObservedLockProvider.TIER_KEY,
                                    ObservedLockProvider.OUTCOME_KEY)
                            .doesNotContain(ObservedLockProvider.LOCK_NAME_KEY, ObservedLockProvider.FENCE_KEY);
                });
    }

    @Test
    @DisplayName("a lease that runs out ends its span tagged EXPIRED, with the loss as a span event")
    void lostLeaseIsASpanEvent() {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2(), "lockstep.providers.exports.uri=" + Starter.h2())
                .withBean(ObservationRegistry.class, () -> observations)
                .run(context -> {
                    LockProvider exports = context.getBean("exportsLockstepProvider", LockProvider.class);
                    // Not renewed, so it runs out on its own: the loss a paused or cut-off holder would see.
                    Lease lease = exports.tryAcquire("nightly-export", LeaseOptions.of(Duration.ofMillis(300)))
                            .orElseThrow();
                    assertThat(lease.lost().toCompletableFuture().get(WAIT_MILLIS, TimeUnit.MILLISECONDS))
                            .isEqualTo(LossReason.EXPIRED);

                    SimpleSpan span = endedSpan(ObservedLockProvider.LEASE);
                    assertThat(span.getTags())
                            .containsEntry(ObservedLockProvider.PROVIDER_KEY, "exports")
                            .containsEntry(ObservedLockProvider.BACKEND_KEY, "jdbc")
                            .containsEntry(ObservedLockProvider.END_KEY, "EXPIRED")
                            .containsEntry(ObservedLockProvider.LOCK_NAME_KEY, "nightly-export");
                    // Micrometer Tracing names a span event by the observation event's contextual name.
                    assertThat(span.getEvents()).extracting(Map.Entry::getValue).containsExactly("lease lost: EXPIRED");
                });
    }

    /**
     * The one span named {@code name}, once it has ended: a lease's span ends on its loss signal, which
     * may complete on another thread just after the caller sees it.
     */
    private SimpleSpan endedSpan(String name) throws InterruptedException {
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        while (true) {
            List<SimpleSpan> ended = tracer.getSpans().stream()
                    .filter(span -> name.equals(span.getName()))
                    .filter(span -> span.getEndTimestamp().toEpochMilli() != 0)
                    .toList();
            if (!ended.isEmpty() || System.currentTimeMillis() > deadline) {
                assertThat(ended)
                        .as("ended spans named %s among %s", name, tracer.getSpans())
                        .hasSize(1);
                return ended.get(0);
            }
            Thread.sleep(10);
        }
    }
}
