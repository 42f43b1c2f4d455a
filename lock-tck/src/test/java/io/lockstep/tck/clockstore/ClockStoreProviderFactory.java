package io.lockstep.tck.clockstore;

import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.LockProviderFactory;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Opens {@code clockstore://host:port?timeout=500ms&driftFactor=0.3[&wallClockOffset=2s][&bug=IGNORES_DRIFT]}:
 * the test fixture {@link ClockStoreBackend} over a {@link ClockStoreServer}.
 */
public final class ClockStoreProviderFactory implements LockProviderFactory {

    /** For ServiceLoader. */
    public ClockStoreProviderFactory() {}

    @Override
    public String name() {
        return "clock-store-fixture";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("clockstore");
    }

    @Override
    public LockProvider create(LockConfig config) {
        Duration timeout = config.durationProperty("timeout", Duration.ofMillis(500));
        double driftFactor = ClockDrift.requireFactor(
                Double.parseDouble(config.property("driftFactor").orElse("0")));
        @Nullable
        Duration offset = config.property("wallClockOffset").isPresent()
                ? config.durationProperty("wallClockOffset", Duration.ZERO)
                : null;
        ClockStoreBackend.Bug bug = ClockStoreBackend.Bug.valueOf(
                config.property("bug").orElse("NONE").toUpperCase(Locale.ROOT));
        return new BackendLockProvider<>(
                new ClockStoreBackend(
                        config.uri().getHost(), config.uri().getPort(), timeout, driftFactor, offset, bug),
                config.runtime());
    }
}
