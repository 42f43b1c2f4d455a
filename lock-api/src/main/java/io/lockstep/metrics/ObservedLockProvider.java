package io.lockstep.metrics;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.LockTimeoutException;
import io.lockstep.LossReason;
import io.lockstep.ProviderInfo;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockProvider} that reports to a Micrometer {@link ObservationRegistry}, so acquires and
 * leases reach traces (Micrometer Tracing to OpenTelemetry or Zipkin) and timers; needs {@code
 * micrometer-observation} on the classpath (an optional dependency of lock-api).
 *
 * <ul>
 *   <li><b>{@value #ACQUIRE}</b>: one observation per {@code tryAcquire} or {@code acquire} call, in
 *       scope while the call runs. Low-cardinality keys: {@value #PROVIDER_KEY}, {@value #BACKEND_KEY},
 *       {@value #TIER_KEY}, {@value #OUTCOME_KEY} ({@code acquired}, {@code not-acquired} or {@code
 *       error}, the error also recorded). High-cardinality: {@value #LOCK_NAME_KEY}.
 *   <li><b>{@value #LEASE}</b>: one observation per granted lease, from the grant until {@link
 *       Lease#lost()} completes (a meter handler turns it into a long-task timer, {@code
 *       lockstep.lease.active}, and a timer of the whole hold). Its parent observation is the one current
 *       when the acquire was called; it starts while the acquire's observation is in scope, so a tracer
 *       (Micrometer Tracing parents a span on the span in scope) shows it as a child of the acquire's
 *       span that granted it, outliving it. Low-cardinality keys as above with {@value #END_KEY} (the {@link
 *       LossReason}) instead of the outcome; high-cardinality {@value #LOCK_NAME_KEY} and {@value
 *       #FENCE_KEY}. A lease that ends for any reason but {@code RELEASED} gets the event {@value
 *       #LOST_EVENT}, whose contextual name carries the reason.
 * </ul>
 *
 * <p>Lock names are never low-cardinality: they are unbounded. Thread-safe as the provider it wraps;
 * closing it closes that provider. With {@link ObservationRegistry#NOOP} it costs one check per call.
 */
public final class ObservedLockProvider implements LockProvider {

    /** The observation of one acquire call. */
    public static final String ACQUIRE = "lockstep.acquire";
    /** The observation of one lease, from grant to end. */
    public static final String LEASE = "lockstep.lease";
    /** The event on a {@link #LEASE} observation when the lease ends for any reason but {@code RELEASED}. */
    public static final String LOST_EVENT = "lockstep.lease.lost";
    /** The provider's name in the application. */
    public static final String PROVIDER_KEY = "lockstep.provider";
    /** The backend kind ({@link ProviderInfo#name()}). */
    public static final String BACKEND_KEY = "lockstep.backend";
    /** The provider's {@link io.lockstep.StrengthTier}. */
    public static final String TIER_KEY = "lockstep.tier";
    /** How an acquire ended: {@code acquired}, {@code not-acquired}, {@code error}. */
    public static final String OUTCOME_KEY = "lockstep.outcome";
    /** Why a lease ended: a {@link LossReason} name. */
    public static final String END_KEY = "lockstep.lease.end";
    /** The lock's name; high cardinality only. */
    public static final String LOCK_NAME_KEY = "lockstep.lock.name";
    /** The lease's fencing token, where the provider gives one; high cardinality only. */
    public static final String FENCE_KEY = "lockstep.fence";

    private final LockProvider delegate;
    private final ObservationRegistry registry;
    private final String providerName;
    private final String backend;
    private final String tier;

    private ObservedLockProvider(LockProvider delegate, ObservationRegistry registry, String providerName) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.registry = Objects.requireNonNull(registry, "registry");
        this.providerName = Objects.requireNonNull(providerName, "providerName");
        ProviderInfo info = delegate.info();
        this.backend = info.name();
        this.tier = info.tier().name();
    }

    /**
     * Observes {@code delegate} in {@code registry} under the name {@code providerName} (the value of
     * {@value #PROVIDER_KEY}; keep it to a handful of values per application).
     */
    public static ObservedLockProvider observe(
            LockProvider delegate, ObservationRegistry registry, String providerName) {
        return new ObservedLockProvider(delegate, registry, providerName);
    }

    /** The provider this one reports for. */
    public LockProvider delegate() {
        return delegate;
    }

    @Override
    public Optional<Lease> tryAcquire(String name, LeaseOptions options) {
        return observeAcquire(
                name, () -> delegate.tryAcquire(name, options), Optional::orElseThrow, Optional::isPresent);
    }

    @Override
    public Lease acquire(String name, LeaseOptions options) {
        return observeAcquire(name, () -> delegate.acquire(name, options), lease -> lease, lease -> true);
    }

    private <T> T observeAcquire(
            String name,
            Supplier<T> call,
            java.util.function.Function<T, Lease> leaseOf,
            java.util.function.Predicate<T> granted) {
        Observation parent = registry.getCurrentObservation();
        LockObservationContext context = new LockObservationContext(name, providerName, backend);
        Observation observation = observation(ACQUIRE, context, parent).start();
        String outcome = "error";
        try (Observation.Scope ignored = observation.openScope()) {
            T result = call.get();
            boolean acquired = granted.test(result);
            outcome = acquired ? "acquired" : "not-acquired";
            if (acquired) {
                observeLease(leaseOf.apply(result), parent);
            }
            return result;
        } catch (LockTimeoutException e) {
            outcome = "not-acquired";
            throw e;
        } catch (RuntimeException | Error e) {
            observation.error(e);
            throw e;
        } finally {
            context.outcome(outcome);
            observation.lowCardinalityKeyValue(OUTCOME_KEY, outcome);
            observation.stop();
        }
    }

    private void observeLease(Lease lease, @Nullable Observation parent) {
        LockObservationContext context = new LockObservationContext(lease.name(), providerName, backend);
        Observation observation = observation(LEASE, context, parent);
        lease.fencingToken().ifPresent(fence -> observation.highCardinalityKeyValue(FENCE_KEY, Long.toString(fence)));
        observation.start();
        lease.lost().thenAccept(reason -> {
            context.endReason(reason);
            observation.lowCardinalityKeyValue(END_KEY, reason.name());
            if (reason != LossReason.RELEASED) {
                observation.event(Observation.Event.of(LOST_EVENT, "lease lost: " + reason.name()));
            }
            observation.stop();
        });
    }

    private Observation observation(String name, LockObservationContext context, @Nullable Observation parent) {
        return Observation.createNotStarted(name, () -> context, registry)
                .parentObservation(parent)
                .lowCardinalityKeyValue(PROVIDER_KEY, providerName)
                .lowCardinalityKeyValue(BACKEND_KEY, backend)
                .lowCardinalityKeyValue(TIER_KEY, tier)
                .highCardinalityKeyValue(LOCK_NAME_KEY, context.lockName());
    }

    @Override
    public ProviderInfo info() {
        return delegate.info();
    }

    @Override
    public Optional<LockState> inspect(String name) {
        return delegate.inspect(name);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "ObservedLockProvider[" + providerName + ", " + delegate + "]";
    }
}
