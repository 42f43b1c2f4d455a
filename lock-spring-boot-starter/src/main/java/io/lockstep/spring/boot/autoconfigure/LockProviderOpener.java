package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.Locks;
import io.lockstep.spring.boot.ManagedLockProvider;
import java.time.Clock;
import java.util.Objects;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens the providers the properties name: {@link Locks#open(LockConfig)} with the shared runtime,
 * observed when an ObservationRegistry exists, wrapped in a {@link ManagedLockProvider}. A bad URI or a
 * missing backend module throws Lockstep's own {@link io.lockstep.LockConfigurationException}, which
 * fails the context; there is never a lock that does nothing.
 */
public final class LockProviderOpener {

    private static final Logger log = LoggerFactory.getLogger(LockProviderOpener.class);

    private final LockRuntime runtime;
    private final BiFunction<LockProvider, String, LockProvider> decorator;
    private final LockstepProperties properties;

    LockProviderOpener(
            LockRuntime runtime,
            BiFunction<LockProvider, String, LockProvider> decorator,
            LockstepProperties properties) {
        this.runtime = Objects.requireNonNull(runtime, "runtime");
        this.decorator = Objects.requireNonNull(decorator, "decorator");
        this.properties = Objects.requireNonNull(properties, "properties");
    }

    /**
     * Opens the provider {@code name} (for logs, metrics and health) at {@code uri}, set by {@code property}.
     *
     * @throws LockConfigurationException with Lockstep's message, prefixed by the property
     * @throws BackendUnavailableException if the backend cannot be reached, prefixed by the property
     */
    public ManagedLockProvider open(String name, String property, String uri) {
        LockProvider opened;
        try {
            opened = Locks.open(LockConfig.of(uri).withRuntime(runtime));
        } catch (LockConfigurationException e) {
            throw new LockConfigurationException(property + ": " + e.getMessage(), e);
        } catch (BackendUnavailableException e) {
            throw new BackendUnavailableException(property + ": " + e.getMessage(), e, e.isTransient());
        }
        LockProvider decorated;
        try {
            decorated = decorator.apply(opened, name);
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
        log.info(
                "Lockstep provider '{}' open: {} ({}, tier {})",
                name,
                LockConfig.redacted(uri),
                opened.info().name(),
                opened.info().tier());
        return new ManagedLockProvider(
                name, uri, decorated, properties.getHealth().getLossWindow(), Clock.systemUTC());
    }

    /** Opens the provider named under {@code lockstep.providers.<name>}. */
    ManagedLockProvider openNamed(String name) {
        LockstepProperties.Provider provider = properties.getProviders().get(name);
        if (provider == null || provider.getUri() == null) {
            throw new IllegalStateException("lockstep.providers." + name + ".uri is not set");
        }
        return open(name, "lockstep.providers." + name + ".uri", provider.getUri());
    }
}
