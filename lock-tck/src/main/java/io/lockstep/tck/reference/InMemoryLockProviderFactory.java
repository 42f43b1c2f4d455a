package io.lockstep.tck.reference;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.MonotonicClock;
import io.lockstep.spi.LockProviderFactory;
import java.util.Set;

/**
 * Opens {@code mem://name}: a client of this JVM's {@link InMemoryLockStore#named(String) store named
 * name}. For tests and for checking the kit itself ({@code TckLauncher --uri mem://self}); locks live
 * in one JVM only. Stateless.
 */
public final class InMemoryLockProviderFactory implements LockProviderFactory {

    /** The URI scheme. */
    public static final String SCHEME = "mem";

    /** The factory {@link java.util.ServiceLoader} instantiates. */
    public InMemoryLockProviderFactory() {}

    @Override
    public String name() {
        return "in-memory";
    }

    @Override
    public Set<String> schemes() {
        return Set.of(SCHEME);
    }

    @Override
    public LockProvider create(LockConfig config) {
        String host = config.uri().getHost();
        String name = host != null ? host : config.uri().getSchemeSpecificPart();
        if (name == null || name.isBlank() || name.startsWith("?")) {
            throw new LockConfigurationException(
                    "uri must name the store, as in mem://orders, was '" + LockConfig.redacted(config.uri()) + "'");
        }
        if (config.runtime().clock() != MonotonicClock.SYSTEM) {
            throw new LockConfigurationException(
                    "mem:// stores run on the system clock; for an injected clock, use new InMemoryLockProvider(store, runtime)");
        }
        return new InMemoryLockProvider(InMemoryLockStore.named(name), config.runtime());
    }
}
