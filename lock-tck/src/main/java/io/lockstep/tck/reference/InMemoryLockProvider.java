package io.lockstep.tck.reference;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.ProviderInfo;
import io.lockstep.spi.BackendLockProvider;
import java.util.Objects;
import java.util.Optional;

/**
 * The reference provider: {@link BackendLockProvider} over an {@link InMemoryLockBackend}, so it waits,
 * renews, expires and fails closed exactly as every Lockstep backend does. It claims every capability
 * and passes the compatibility kit.
 *
 * <pre>{@code
 * InMemoryLockStore store = new InMemoryLockStore();
 * try (LockProvider locks = new InMemoryLockProvider(store)) { ... }
 * }</pre>
 *
 * <p>Also opened by URI: {@code Locks.open("mem://name")} shares {@link InMemoryLockStore#named(String)}
 * within the JVM. Thread-safe.
 */
public final class InMemoryLockProvider implements LockProvider {

    private final InMemoryLockStore store;
    private final BackendLockProvider<InMemoryLockBackend.Handle> delegate;

    /** A client of {@code store}, measuring validity on the store's clock. */
    public InMemoryLockProvider(InMemoryLockStore store) {
        this(store, LockRuntime.builder().clock(store.clock()).build());
    }

    /**
     * A client of {@code store} with {@code runtime}, whose clock must be the store's.
     *
     * @throws IllegalArgumentException if the runtime's clock is not the store's
     */
    public InMemoryLockProvider(InMemoryLockStore store, LockRuntime runtime) {
        this.store = Objects.requireNonNull(store, "store");
        Objects.requireNonNull(runtime, "runtime");
        if (runtime.clock() != store.clock()) {
            throw new IllegalArgumentException(
                    "runtime.clock() must be the store's clock (" + store.clock() + "), was " + runtime.clock());
        }
        this.delegate = new BackendLockProvider<>(new InMemoryLockBackend(store), runtime);
    }

    /** The store this provider is a client of. */
    public InMemoryLockStore store() {
        return store;
    }

    @Override
    public Optional<Lease> tryAcquire(String name, LeaseOptions options) {
        return delegate.tryAcquire(name, options);
    }

    @Override
    public Lease acquire(String name, LeaseOptions options) {
        return delegate.acquire(name, options);
    }

    @Override
    public ProviderInfo info() {
        return delegate.info();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
