package io.lockstep.tck.reference;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.LockState;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.LockBackend;
import io.lockstep.spi.ReleaseWatch;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Optional;

/**
 * The reference {@link LockBackend}: a client of an {@link InMemoryLockStore}. Each backend is one
 * client; several on one store contend for the same locks. Thread-safe.
 */
public final class InMemoryLockBackend implements LockBackend<InMemoryLockBackend.Handle> {

    /** What every in-memory provider claims: the kit checks all of it. */
    public static final ProviderInfo INFO = new ProviderInfo(
            "in-memory",
            StrengthTier.CONSENSUS,
            EnumSet.of(Capability.FENCING, Capability.LEASE_EXPIRY, Capability.EXTEND, Capability.NOTIFIED_WAIT));

    /**
     * What extends and releases a grant.
     *
     * @param lock the lock's name
     * @param owner the owner token it was granted to
     * @param fence its fencing token
     */
    public record Handle(String lock, String owner, long fence) {
        /** Checks the fields. */
        public Handle {
            Objects.requireNonNull(lock, "lock");
            Objects.requireNonNull(owner, "owner");
        }
    }

    private final InMemoryLockStore store;
    private final InMemoryLockStore.Connection connection;
    private final boolean inspects;
    private volatile boolean closed;

    /** A client of {@code store}; it cannot {@link #inspect} (so {@code mem://} is a backend that cannot tell). */
    public InMemoryLockBackend(InMemoryLockStore store) {
        this(store, false);
    }

    /** A client of {@code store} that answers {@link #inspect} if {@code inspects}: the kit's own tests use it. */
    InMemoryLockBackend(InMemoryLockStore store, boolean inspects) {
        this.store = Objects.requireNonNull(store, "store");
        this.connection = store.connect();
        this.inspects = inspects;
    }

    /** This client's connection, for broken providers in the kit's own tests. */
    InMemoryLockStore.Connection connection() {
        return connection;
    }

    /** The store this client talks to. */
    public InMemoryLockStore store() {
        return store;
    }

    @Override
    public ProviderInfo info() {
        return INFO;
    }

    @Override
    public Attempt<Handle> tryLock(String name, String ownerToken, Duration leaseTime) {
        requireOpen();
        return store.tryLock(connection, name, ownerToken, leaseTime);
    }

    @Override
    public Optional<Duration> extend(Handle handle, Duration leaseTime) {
        requireOpen();
        return store.extend(connection, handle, leaseTime);
    }

    @Override
    public boolean release(Handle handle) {
        requireOpen();
        return store.release(connection, handle);
    }

    @Override
    public void abandon(String name, String ownerToken) {
        if (!closed) {
            store.abandon(connection, name, ownerToken);
        }
    }

    @Override
    public Optional<LockState> inspect(String name) {
        if (!inspects) {
            return Optional.empty();
        }
        requireOpen();
        return Optional.of(store.inspect(connection, name));
    }

    @Override
    public ReleaseWatch watch(String name) {
        return store.watch(name);
    }

    @Override
    public String describe() {
        return store.name();
    }

    @Override
    public void close() {
        // The store outlives its clients; a closed client, like a closed connection, can do nothing more.
        closed = true;
    }

    private void requireOpen() {
        if (closed) {
            throw new BackendUnavailableException("the client of " + store.name() + " is closed", null, false);
        }
    }
}
