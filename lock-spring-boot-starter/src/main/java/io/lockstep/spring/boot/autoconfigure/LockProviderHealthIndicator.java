package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.LockProvider;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
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

    private final ProviderHealthCheck check;

    LockProviderHealthIndicator(LockProvider provider, Duration timeout, ExecutorService probes) {
        this.check = new ProviderHealthCheck(provider, timeout, probes);
    }

    @Override
    public Health health() {
        ProviderHealthCheck.Result result = check.check();
        return (result.up() ? Health.up() : Health.down())
                .withDetails(result.details())
                .build();
    }
}
