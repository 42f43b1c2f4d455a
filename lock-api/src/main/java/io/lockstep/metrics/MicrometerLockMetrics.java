package io.lockstep.metrics;

import io.lockstep.LossReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Objects;

/**
 * {@link LockMetrics} on a Micrometer {@link MeterRegistry}; needs {@code micrometer-core} on the
 * classpath (an optional dependency of lock-api). Meters, all tagged {@code provider}:
 * {@code lockstep.acquire.attempts}, {@code lockstep.acquire.successes},
 * {@code lockstep.acquire.timeouts}, {@code lockstep.acquire.wait} (timer),
 * {@code lockstep.hold} (timer), {@code lockstep.renewals}, {@code lockstep.renewal.failures},
 * {@code lockstep.losses} (also tagged {@code reason}). Lock names are never tags: they are
 * unbounded.
 */
public final class MicrometerLockMetrics implements LockMetrics {

    private final MeterRegistry registry;

    /** Metrics registered in {@code registry}. */
    public MicrometerLockMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public void acquireAttempted(String provider) {
        counter("lockstep.acquire.attempts", provider).increment();
    }

    @Override
    public void acquired(String provider, Duration waited) {
        counter("lockstep.acquire.successes", provider).increment();
        timer("lockstep.acquire.wait", provider).record(waited);
    }

    @Override
    public void acquireTimedOut(String provider, Duration waited) {
        counter("lockstep.acquire.timeouts", provider).increment();
        timer("lockstep.acquire.wait", provider).record(waited);
    }

    @Override
    public void renewed(String provider) {
        counter("lockstep.renewals", provider).increment();
    }

    @Override
    public void renewalFailed(String provider) {
        counter("lockstep.renewal.failures", provider).increment();
    }

    @Override
    public void lost(String provider, LossReason reason) {
        Counter.builder("lockstep.losses")
                .tag("provider", provider)
                .tag("reason", reason.name())
                .register(registry)
                .increment();
    }

    @Override
    public void released(String provider, Duration held) {
        timer("lockstep.hold", provider).record(held);
    }

    private Counter counter(String name, String provider) {
        return Counter.builder(name).tag("provider", provider).register(registry);
    }

    private Timer timer(String name, String provider) {
        return Timer.builder(name).tag("provider", provider).register(registry);
    }
}
