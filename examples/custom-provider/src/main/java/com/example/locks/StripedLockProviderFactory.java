package com.example.locks;

import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.LockProviderFactory;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code striped://<table>?stripes=64}: every provider opened on the same table name in one JVM shares
 * its locks, as clients of one server would.
 */
public final class StripedLockProviderFactory implements LockProviderFactory {

    private static final Map<String, StripedLockBackend> TABLES = new ConcurrentHashMap<>();

    @Override
    public String name() {
        return "striped";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("striped");
    }

    @Override
    public LockProvider create(LockConfig config) {
        String table = config.uri().getHost() == null ? "default" : config.uri().getHost();
        int stripes = config.intProperty("stripes", 64, 1, 4096);
        StripedLockBackend backend = TABLES.computeIfAbsent(table, t -> new StripedLockBackend(stripes, t));
        return new BackendLockProvider<>(backend, config.runtime());
    }
}
