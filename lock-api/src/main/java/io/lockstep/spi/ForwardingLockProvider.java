package io.lockstep.spi;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.ProviderInfo;
import java.util.Objects;
import java.util.Optional;

/**
 * A public provider type that forwards to another provider, usually a {@link BackendLockProvider}:
 * a backend module's named, documented entry point ({@code RedisLockProvider}) without repeating the
 * forwarding. Thread-safe if the delegate is.
 */
public abstract class ForwardingLockProvider implements LockProvider {

    private final LockProvider delegate;

    /** Forwards every call to {@code delegate}. */
    protected ForwardingLockProvider(LockProvider delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
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
    public java.util.Optional<io.lockstep.LockState> inspect(String name) {
        return delegate.inspect(name);
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
