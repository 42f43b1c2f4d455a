package io.lockstep.redlock.internal;

import java.util.List;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/** Helpers over the replies of one fan-out: one entry per node, null for a node that did not answer. */
final class Replies {

    private Replies() {}

    /** One node's answer: a value, or why there is none. */
    record Reply<T>(@Nullable T value, @Nullable String failure) {
        static <T> Reply<T> of(T value) {
            return new Reply<>(value, null);
        }

        static <T> Reply<T> failed(String failure) {
            return new Reply<>(null, failure);
        }
    }

    /** Counts the replies whose value matches. */
    static <T> int count(List<@Nullable Reply<T>> replies, Predicate<T> matches) {
        int n = 0;
        for (Reply<T> reply : replies) {
            if (reply != null && reply.value() != null && matches.test(reply.value())) {
                n++;
            }
        }
        return n;
    }
}
