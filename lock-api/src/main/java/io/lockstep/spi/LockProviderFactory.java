package io.lockstep.spi;

import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import java.util.List;
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
     * What providers built by this factory claim, per kind of URI (scheme or mode), known without
     * connecting to anything: what {@code lockctl backends} lists. Each kind must equal what {@link
     * LockProvider#info()} reports for a provider built from such a URI. The default, an empty list,
     * says the factory cannot tell before it connects, so factories written before this method keep
     * working.
     */
    default List<ProviderKind> kinds() {
        return List.of();
    }

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
