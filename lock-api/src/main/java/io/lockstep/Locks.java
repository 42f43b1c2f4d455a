package io.lockstep;

import io.lockstep.spi.LockProviderFactory;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/**
 * Opens a {@link LockProvider} by URI, finding the factory with {@link ServiceLoader}.
 *
 * <pre>{@code
 * try (LockProvider locks = Locks.open("redis://localhost:6379")) { ... }
 * }</pre>
 *
 * <p>Resolution by the URI's scheme: no factory for it throws, naming the artifact to add; exactly
 * one is used; several throw unless the {@code provider} query parameter names one
 * ({@code redis://host?provider=redis}). There is never a fallback to a lock that does nothing.
 */
public final class Locks {

    /** The query parameter (or property) that chooses among several factories for one scheme. */
    public static final String PROVIDER_PROPERTY = "provider";

    private static final Map<String, String> ARTIFACTS = Map.of(
            "redis", "io.lockstep:lock-redis",
            "rediss", "io.lockstep:lock-redis",
            "redlock", "io.lockstep:lock-redlock",
            "etcd", "io.lockstep:lock-etcd",
            "zookeeper", "io.lockstep:lock-zookeeper",
            "jdbc", "io.lockstep:lock-jdbc");

    private Locks() {}

    /**
     * Opens a provider for {@code uri} with the default runtime.
     *
     * @throws LockConfigurationException if no single factory serves the URI's scheme or the URI is bad
     * @throws BackendUnavailableException if the backend cannot be reached
     */
    public static LockProvider open(String uri) {
        return open(LockConfig.of(uri));
    }

    /** Opens a provider for a configuration (a URI plus properties and runtime). */
    public static LockProvider open(LockConfig config) {
        return factoryFor(config).create(config);
    }

    /** The factory that {@link #open(LockConfig)} would use, resolved by the rules above. */
    public static LockProviderFactory factoryFor(LockConfig config) {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        if (loader == null) {
            loader = Locks.class.getClassLoader();
        }
        List<LockProviderFactory> all = ServiceLoader.load(LockProviderFactory.class, loader).stream()
                .map(ServiceLoader.Provider::get)
                .toList();
        return resolve(config, all);
    }

    static LockProviderFactory resolve(LockConfig config, List<LockProviderFactory> all) {
        String scheme = config.scheme();
        List<LockProviderFactory> candidates =
                all.stream().filter(f -> f.schemes().contains(scheme)).toList();
        String chosen = config.property(PROVIDER_PROPERTY).orElse(null);
        if (chosen != null) {
            return candidates.stream()
                    .filter(f -> f.name().equals(chosen))
                    .findFirst()
                    .orElseThrow(() -> new LockConfigurationException("provider '" + chosen
                            + "' does not serve scheme '" + scheme + "'; providers for it: " + names(candidates)));
        }
        if (candidates.isEmpty()) {
            String artifact = ARTIFACTS.get(scheme);
            throw new LockConfigurationException("no Lockstep provider for scheme '" + scheme + "' in "
                    + LockConfig.redacted(config.uri())
                    + (artifact == null
                            ? "; known schemes: "
                                    + String.join(
                                            ", ",
                                            ARTIFACTS.keySet().stream().sorted().toList())
                            : "; add " + artifact + " to the classpath"));
        }
        if (candidates.size() > 1) {
            throw new LockConfigurationException("several providers serve scheme '" + scheme + "': " + names(candidates)
                    + "; choose one with ?" + PROVIDER_PROPERTY + "=<name>");
        }
        return candidates.get(0);
    }

    private static String names(List<LockProviderFactory> factories) {
        return factories.isEmpty()
                ? "none"
                : factories.stream().map(LockProviderFactory::name).collect(Collectors.joining(", "));
    }
}
