package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockException;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.spring.boot.LeaseStatistics;
import io.lockstep.spring.boot.ManagedLockProvider;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The health of one provider, bounded in time: UP when the backend answered a probe within the timeout,
 * DOWN with the reason when it failed or did not answer (the check is abandoned, never waited for). A
 * probe still running from an earlier check is not doubled: the check reports DOWN at once. Details:
 * backend kind, tier, URI without secrets, live leases and leases lost recently. Thread-safe.
 *
 * <p>The probe asks the backend about the lock {@value #PROBE_LOCK} ({@link LockProvider#inspect}); a
 * provider that cannot inspect takes and gives back that lock for one second instead.
 */
public final class LockProviderHealthIndicator implements HealthIndicator {

    /** The lock the probe asks about. */
    public static final String PROBE_LOCK = "lockstep-health-probe";

    private final LockProvider provider;
    private final Duration timeout;
    private final ExecutorService probes;
    private @Nullable Future<String> running; // guarded by this

    LockProviderHealthIndicator(LockProvider provider, Duration timeout, ExecutorService probes) {
        this.provider = Objects.requireNonNull(provider, "provider");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.probes = Objects.requireNonNull(probes, "probes");
    }

    @Override
    public Health health() {
        Health.Builder health = Health.unknown();
        health.withDetail("backend", provider.info().name())
                .withDetail("tier", provider.info().tier().name());
        if (provider instanceof ManagedLockProvider managed) {
            LeaseStatistics stats = managed.statistics();
            health.withDetail("uri", managed.redactedUri())
                    .withDetail("liveLeases", stats.liveLeases())
                    .withDetail("leasesLostRecently", stats.lostRecently())
                    .withDetail("lossWindow", stats.window().toString());
            stats.lastLoss()
                    .ifPresent(loss -> health.withDetail(
                            "lastLoss", loss.reason() + " of '" + loss.lockName() + "' at " + loss.at()));
        }
        Future<String> probe;
        synchronized (this) {
            if (running != null && !running.isDone()) {
                return health.down()
                        .withDetail("error", "the previous check has not answered yet (timeout " + timeout + ")")
                        .build();
            }
            probe = probes.submit(this::probe);
            running = probe;
        }
        try {
            return health.up()
                    .withDetail("probe", probe.get(timeout.toNanos(), TimeUnit.NANOSECONDS))
                    .build();
        } catch (TimeoutException e) {
            probe.cancel(true);
            return health.down()
                    .withDetail("error", "the backend did not answer within " + timeout)
                    .build();
        } catch (ExecutionException e) {
            return health.down().withDetail("error", describe(e.getCause())).build();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return health.down().withDetail("error", "interrupted").build();
        }
    }

    private String probe() {
        Optional<LockState> state = provider.inspect(PROBE_LOCK);
        if (state.isPresent()) {
            return "inspect";
        }
        Optional<Lease> lease = provider.tryAcquire(PROBE_LOCK, LeaseOptions.of(Duration.ofSeconds(1)));
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
