package io.lockstep.spring.boot;

import io.lockstep.LeaseOptions;
import java.util.Objects;

/**
 * What a {@link Locked @Locked} method uses where it leaves an attribute empty: the {@code lockstep.lease.*}
 * options and {@code lockstep.locked.when-held}.
 *
 * @param options the default lease time, wait, renewal and maximum hold
 * @param whenHeld what a call does when the lock stays held elsewhere ({@code SKIP} or {@code FAIL})
 */
public record LockedDefaults(LeaseOptions options, Locked.WhenHeld whenHeld) {

    /** Checks that {@code whenHeld} is a decision, not {@code DEFAULT}. */
    public LockedDefaults {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(whenHeld, "whenHeld");
        if (whenHeld == Locked.WhenHeld.DEFAULT) {
            throw new IllegalArgumentException("whenHeld must be SKIP or FAIL, was DEFAULT");
        }
    }
}
