package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockException;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.spring.boot.LeaseStatistics;
import io.lockstep.spring.boot.ManagedLockProvider;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The health check of one provider, independent of Boot's health types (Boot 4's {@code
 * spring-boot-health} and Boot 3's actuator each adapt it): UP when the backend answered a probe within
 * the timeout, DOWN with the reason when it failed or did not answer (the check is abandoned, never
 * waited for). A probe still running from an earlier check is not doubled: the check reports DOWN at
 * once. Thread-safe.
 */
final class ProviderHealthCheck {

    /** The outcome of one check: up or down, and the details to show (never a secret). */
    record Result(boolean up, Map<String, Object> details) {}

    private final LockProvider provider;
    private final Duration timeout;
    private final ExecutorService probes;
    private @Nullable Future<String> running; // guarded by this

    ProviderHealthCheck(LockProvider provider, Duration timeout, ExecutorService probes) {
        this.provider = Objects.requireNonNull(provider, "provider");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.probes = Objects.requireNonNull(probes, "probes");
    }

    Result check() {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("backend", provider.info().name());
        details.put("tier", provider.info().tier().name());
        if (provider instanceof ManagedLockProvider managed) {
            LeaseStatistics stats = managed.statistics();
            details.put("uri", managed.redactedUri());
            details.put("liveLeases", stats.liveLeases());
            details.put("leasesLostRecently", stats.lostRecently());
            details.put("lossWindow", stats.window().toString());
            stats.lastLoss()
                    .ifPresent(loss ->
                            details.put("lastLoss", loss.reason() + " of '" + loss.lockName() + "' at " + loss.at()));
        }
        Future<String> probe;
        synchronized (this) {
            if (running != null && !running.isDone()) {
                details.put("error", "the previous check has not answered yet (timeout " + timeout + ")");
                return new Result(false, details);
            }
            probe = probes.submit(this::probe);
            running = probe;
        }
        try {
            details.put("probe", probe.get(timeout.toNanos(), TimeUnit.NANOSECONDS));
            return new Result(true, details);
        } catch (TimeoutException e) {
            probe.cancel(true);
            details.put("error", "the backend did not answer within " + timeout);
        } catch (ExecutionException e) {
            details.put("error", describe(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            details.put("error", "interrupted");
        }
        return new Result(false, details);
    }

    private String probe() {
        Optional<LockState> state = provider.inspect(LockProviderHealthIndicator.PROBE_LOCK);
        if (state.isPresent()) {
            return "inspect";
        }
        Optional<Lease> lease =
                provider.tryAcquire(LockProviderHealthIndicator.PROBE_LOCK, LeaseOptions.of(Duration.ofSeconds(1)));
        lease.ifPresent(Lease::close);
        return "acquire";
    }

    /** Lockstep's messages name hosts, never passwords; other exceptions are named by their type only. */
    private static String describe(@Nullable Throwable failure) {
        if (failure == null) {
            return "unknown failure";
        }
        if (failure instanceof LockException || failure instanceof IllegalStateException) {
            return failure.getClass().getSimpleName() + ": " + failure.getMessage();
        }
        return failure.getClass().getName();
    }
}
