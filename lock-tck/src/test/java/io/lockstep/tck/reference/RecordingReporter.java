package io.lockstep.tck.reference;

import java.util.List;
import org.jspecify.annotations.Nullable;
import org.quicktheories.api.AsString;
import org.quicktheories.core.ExceptionReporter;

/**
 * QuickTheories' usual reporter (it throws the failure with the seed and the smallest falsifying value),
 * which also keeps that value so a test can check how far shrinking got.
 */
final class RecordingReporter extends ExceptionReporter {

    private volatile @Nullable Object smallest;

    /** The smallest falsifying value of the last failure; fails if nothing was falsified. */
    Object smallest() {
        Object value = smallest;
        if (value == null) {
            throw new AssertionError("no property was falsified");
        }
        return value;
    }

    @Override
    public void falisification(
            long seed, int examplesUsed, Object smallest, List<Object> others, AsString<Object> toString) {
        this.smallest = smallest;
        super.falisification(seed, examplesUsed, smallest, others, toString);
    }

    @Override
    public void falisification(
            long seed,
            int examplesUsed,
            Object smallest,
            Throwable cause,
            List<Object> others,
            AsString<Object> toString) {
        this.smallest = smallest;
        super.falisification(seed, examplesUsed, smallest, cause, others, toString);
    }
}
