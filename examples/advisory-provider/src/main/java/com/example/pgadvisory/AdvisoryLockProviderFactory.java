package com.example.pgadvisory;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.LockProviderFactory;
import io.lockstep.spi.UriAuthority;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * {@code pgadvisory://[user[:password]@]host[:port]/database?callTimeout=2s&sslmode=prefer}: PostgreSQL advisory locks
 * with lease rows ({@link AdvisoryLockBackend}). The user defaults to {@code postgres}, the database to
 * {@code postgres}, the port to 5432. Connects lazily: building the provider never fails for an
 * unreachable server, its acquires do (with {@link io.lockstep.BackendUnavailableException}).
 */
public final class AdvisoryLockProviderFactory implements LockProviderFactory {

    private static final List<String> SETTINGS = List.of("callTimeout", "sslmode");

    @Override
    public String name() {
        return "pgadvisory";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("pgadvisory");
    }

    @Override
    public LockProvider create(LockConfig config) {
        config.requireKnownSettings(SETTINGS);
        UriAuthority authority = UriAuthority.parse(config, 5432, "host");
        if (authority.hosts().size() != 1) {
            throw new LockConfigurationException(
                    "host: pgadvisory takes one server, got " + authority.hosts().size());
        }
        String path = config.uri().getPath();
        String database = path == null || path.length() <= 1 ? "postgres" : path.substring(1);
        if (!database.matches("[A-Za-z0-9_]{1,63}")) {
            throw new LockConfigurationException(
                    "database: expected 1 to 63 letters, digits or '_', got '" + database + "'");
        }
        Duration callTimeout = config.durationProperty("callTimeout", Duration.ofSeconds(2));
        String sslMode = config.property("sslmode").orElse("prefer");
        if (!List.of("disable", "prefer", "require", "verify-ca", "verify-full").contains(sslMode)) {
            throw new LockConfigurationException(
                    "sslmode: expected disable, prefer, require, verify-ca or verify-full, got '" + sslMode + "'");
        }
        UriAuthority.HostPort server = authority.hosts().get(0);
        AdvisoryLockBackend backend = new AdvisoryLockBackend(
                server.host(),
                server.port(),
                database,
                authority.user().orElse("postgres"),
                authority.password().orElse(""),
                callTimeout,
                sslMode);
        return new BackendLockProvider<>(backend, config.runtime());
    }
}
