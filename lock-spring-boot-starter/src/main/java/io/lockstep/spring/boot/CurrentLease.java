package io.lockstep.spring.boot;

import io.lockstep.Lease;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The lease of the {@link Locked @Locked} method running on the current thread, for code it calls that
 * needs the fencing token or wants to check {@link Lease#isValid()} in a long loop. Nested {@code
 * @Locked} calls see their own lease and the outer one again after they return.
 */
public final class CurrentLease {

    private static final ThreadLocal<@Nullable Lease> CURRENT = new ThreadLocal<>();

    private CurrentLease() {}

    /** The lease of the innermost {@code @Locked} method running on this thread, if any. */
    public static Optional<Lease> get() {
        return Optional.ofNullable(CURRENT.get());
    }

    /** Binds {@code lease} to this thread and returns what was bound before, for {@link #restore}. */
    static @Nullable Lease bind(Lease lease) {
        Lease previous = CURRENT.get();
        CURRENT.set(lease);
        return previous;
    }

    /** Puts back what {@link #bind} returned. */
    static void restore(@Nullable Lease previous) {
        if (previous == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(previous);
        }
    }
}
