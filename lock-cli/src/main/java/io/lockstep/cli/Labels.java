package io.lockstep.cli;

import io.lockstep.LeaseOptions;
import org.jspecify.annotations.Nullable;

/** {@code --label} of {@code acquire} and {@code run}: checked before anything connects, naming the option. */
final class Labels {

    private Labels() {}

    /** {@code options} with {@code label} if one was given; a bad one is a usage error naming {@code --label}. */
    static LeaseOptions apply(LeaseOptions options, @Nullable String label) {
        if (label == null) {
            return options;
        }
        try {
            return options.withLabel(label);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--label: " + e.getMessage(), e);
        }
    }
}
