package io.lockstep.tck.resp;

import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.LockProviderFactory;
import java.time.Duration;
import java.util.Set;

/** Opens {@code resp://host:port?timeout=500ms}: the test fixture {@link RespLockBackend}. */
public final class RespLockProviderFactory implements LockProviderFactory {

    /** For ServiceLoader. */
    public RespLockProviderFactory() {}

    @Override
    public String name() {
        return "resp-fixture";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("resp");
    }

    @Override
    public LockProvider create(LockConfig config) {
        Duration timeout = config.durationProperty("timeout", Duration.ofMillis(500));
        double driftFactor = ClockDrift.requireFactor(
                Double.parseDouble(config.property("driftFactor").orElse("0")));
        // The clock group's broken provider: declares driftFactor but grants the whole lease time.
        boolean ignoresDrift = config.booleanProperty("ignoresDrift", false);
        return new BackendLockProvider<>(
                new RespLockBackend(config.uri().getHost(), config.uri().getPort(), timeout, driftFactor, ignoresDrift),
                config.runtime());
    }
}
