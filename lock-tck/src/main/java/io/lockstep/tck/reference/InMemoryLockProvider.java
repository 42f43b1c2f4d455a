package io.lockstep.tck.reference;

import io.lockstep.LockRuntime;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.ForwardingLockProvider;
import java.util.Objects;

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
public final class InMemoryLockProvider extends ForwardingLockProvider {

    private final InMemoryLockStore store;

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
        this(store, runtime, false);
    }

    /** As above; {@code inspects} makes {@link #inspect} answer (the kit's own tests check it against the truth). */
    InMemoryLockProvider(InMemoryLockStore store, LockRuntime runtime, boolean inspects) {
        super(new BackendLockProvider<>(new InMemoryLockBackend(requireSameClock(store, runtime), inspects), runtime));
        this.store = store;
    }

    /** A client of {@code store} that answers {@link #inspect}, for the kit's own tests. */
    static InMemoryLockProvider inspecting(InMemoryLockStore store) {
        return new InMemoryLockProvider(
                store, LockRuntime.builder().clock(store.clock()).build(), true);
    }

    private static InMemoryLockStore requireSameClock(InMemoryLockStore store, LockRuntime runtime) {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(runtime, "runtime");
        if (runtime.clock() != store.clock()) {
            throw new IllegalArgumentException(
                    "runtime.clock() must be the store's clock (" + store.clock() + "), was " + runtime.clock());
        }
        return store;
    }

    /** The store this provider is a client of. */
    public InMemoryLockStore store() {
        return store;
    }
}
