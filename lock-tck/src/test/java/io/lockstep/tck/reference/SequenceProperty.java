package io.lockstep.tck.reference;

import static org.quicktheories.QuickTheory.qt;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.quicktheories.core.Gen;

/**
 * Runs a property over generated sequences with QuickTheories, then shortens its smallest falsifying
 * sequence by deleting steps. QuickTheories shrinks each drawn value towards its simplest (a step towards
 * a skip, a number towards its lower bound) but does not delete list elements it still needs for
 * alignment, so the deletion pass finishes the job: the failure names a sequence from which no single
 * step can be removed, QuickTheories' own report, and the seed that reproduces it ({@code -DQT_SEED=}).
 *
 * <p>A step may name an element an earlier step made (the n-th lease handed out). Deleting an earlier
 * step that made one shifts what the later steps name, so the pass also tries each deletion with the
 * later steps renumbered one back ({@code shiftBack}); without that, an unneeded acquire before the lease
 * a failure needs could never be deleted, and how short the result came out depended on the seed.
 */
final class SequenceProperty {

    /** Shrinking only runs on a failure. */
    private static final int SHRINK_CYCLES = 5_000;

    private SequenceProperty() {}

    /** The failure of a sequence property, with the minimal sequence found. */
    static final class Falsified extends AssertionError {
        private final List<?> minimal;

        Falsified(List<?> minimal, Throwable minimalFailure, AssertionError quickTheories) {
            super(
                    "Minimal falsifying sequence (" + minimal.size() + " steps):\n  " + minimal + "\nfails with: "
                            + minimalFailure + "\n" + quickTheories.getMessage(),
                    quickTheories);
            this.minimal = List.copyOf(minimal);
        }

        /** The minimal falsifying sequence, without skipped steps. */
        List<?> minimal() {
            return minimal;
        }
    }

    /**
     * Checks {@code property} on {@code tries} sequences from {@code steps}.
     *
     * @param skip the step that does nothing (dropped from the reported sequence)
     * @param shiftBack the same step naming the element one before the one it names (itself if it names
     *     none, or the first)
     * @throws Falsified if a sequence falsifies the property
     */
    static <T> void check(
            int tries, Gen<List<T>> steps, Predicate<T> skip, UnaryOperator<T> shiftBack, Consumer<List<T>> property) {
        RecordingReporter reporter = new RecordingReporter();
        try {
            qt().withExamples(tries)
                    .withShrinkCycles(SHRINK_CYCLES)
                    .withReporter(reporter)
                    .forAll(steps)
                    .checkAssert(property);
        } catch (AssertionError quickTheories) {
            @SuppressWarnings("unchecked")
            List<T> smallest = new ArrayList<>((List<T>) reporter.smallest());
            smallest.removeIf(skip);
            List<T> minimal = deleteSteps(smallest, shiftBack, property);
            throw new Falsified(minimal, failure(minimal, property), quickTheories);
        }
    }

    private static <T> List<T> deleteSteps(List<T> failing, UnaryOperator<T> shiftBack, Consumer<List<T>> property) {
        List<T> current = new ArrayList<>(failing);
        boolean shorter = true;
        while (shorter) {
            shorter = false;
            for (int i = 0; i < current.size(); i++) {
                List<T> candidate = new ArrayList<>(current);
                candidate.remove(i);
                List<T> renumbered = new ArrayList<>(candidate);
                renumbered.replaceAll(shiftBack);
                for (int k = 0; k < i; k++) {
                    renumbered.set(k, candidate.get(k)); // only the steps after the deleted one shift
                }
                if (failure(candidate, property) != null) {
                    current = candidate;
                } else if (!renumbered.equals(candidate) && failure(renumbered, property) != null) {
                    current = renumbered;
                } else {
                    continue;
                }
                shorter = true;
                i--;
            }
        }
        return current;
    }

    private static <T> Throwable failure(List<T> steps, Consumer<List<T>> property) {
        try {
            property.accept(steps);
            return null;
        } catch (AssertionError | RuntimeException e) {
            return e;
        }
    }
}
