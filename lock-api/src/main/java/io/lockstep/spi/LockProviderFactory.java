package io.lockstep.spi;

import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import java.util.Set;

/**
 * What {@link java.util.ServiceLoader} finds: a stateless, named factory for one or more URI schemes.
 * Register it in {@code META-INF/services/io.lockstep.spi.LockProviderFactory}.
 */
public interface LockProviderFactory {

    /** A short unique name, for choosing among factories with {@code ?provider=name}. */
    String name();

    /** The URI schemes served, in lower case (for example {@code redis} and {@code rediss}). */
    Set<String> schemes();

    /**
     * Builds a live provider; the caller owns and closes it. It may connect eagerly (and throw {@link
     * io.lockstep.BackendUnavailableException} here) or lazily (and throw it from the provider's first
     * call); either way nothing is ever acquired from a backend that cannot be reached.
     *
     * @throws io.lockstep.LockConfigurationException if a setting is bad, naming it and its value
     * @throws io.lockstep.BackendUnavailableException if it connects eagerly and the backend cannot be reached
     */
    LockProvider create(LockConfig config);
}
