package io.lockstep.cli;

import io.lockstep.cli.CompareReport.BackendResult;
import io.lockstep.cli.CompareReport.FaultResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * "Which backend, and why", in words a team lead can paste into a decision: one sentence per row, and one per
 * row and fault (safe / NOT SAFE / violations its tier does not claim to survive / how long nobody could take
 * the lock / how soon a client held it again). The table's summary lines, the JSON and the report all print
 * these same words.
 */
final class Verdicts {
    private Verdicts() {}

    /** Fairness below this Jain's index is called unfair. */
    static final double FAIR_JAIN = 0.9;

    /**
     * A row's verdict.
     *
     * @param backend the row
     * @param status {@code safe}, {@code not safe} (a violation under a fault its tier claims to survive, or
     *     outside every fault), {@code unsafe, not claimed} (violations only under faults its tier does not claim
     *     to survive) or {@code unavailable}
     * @param fair whether the holds were shared fairly (Jain's index at least {@link #FAIR_JAIN}); false when
     *     not measured
     * @param summary the sentence
     * @param faults one verdict per fault, in the order they ran
     */
    record Verdict(String backend, String status, boolean fair, String summary, List<FaultVerdict> faults) {}

    /**
     * A row's verdict under one fault.
     *
     * @param kind the scheduled fault; {@code label} what it was on this row (e.g. {@code failover})
     * @param status {@code safe}, {@code not safe}, {@code unsafe, not claimed} or {@code skipped}
     * @param words the sentence
     */
    record FaultVerdict(String kind, String label, String status, String words) {}

    static final String SAFE = "safe";
    static final String NOT_SAFE = "not safe";
    static final String NOT_CLAIMED = "unsafe, not claimed";
    static final String SKIPPED = "skipped";
    static final String UNAVAILABLE = "unavailable";

    /** Every row's verdict. */
    static List<Verdict> of(List<BackendResult> rows) {
        return rows.stream().map(Verdicts::of).toList();
    }

    /** One row's verdict. */
    static Verdict of(BackendResult r) {
        if (!r.started()) {
            return new Verdict(r.backend(), UNAVAILABLE, false, "unavailable: " + r.unavailableReason(), List.of());
        }
        List<FaultVerdict> faults = new ArrayList<>();
        boolean notClaimed = false;
        boolean notSafe = r.invariantBroken();
        for (FaultResult f : r.faults()) {
            FaultVerdict v = fault(r, f);
            faults.add(v);
            notSafe |= v.status().equals(NOT_SAFE);
            notClaimed |= v.status().equals(NOT_CLAIMED);
        }
        String status = notSafe ? NOT_SAFE : notClaimed ? NOT_CLAIMED : SAFE;
        return new Verdict(
                r.backend(), status, !Double.isNaN(r.jainIndex()) && r.jainIndex() >= FAIR_JAIN, summary(r), faults);
    }

    /** A row's verdict under one fault. */
    static FaultVerdict fault(BackendResult r, FaultResult f) {
        if (f.skipped()) {
            return new FaultVerdict(f.kind(), f.label(), SKIPPED, f.recovery());
        }
        List<String> words = new ArrayList<>();
        String status;
        if (f.violations() == 0) {
            status = SAFE;
            words.add("safe");
        } else if (f.tolerated()) {
            status = NOT_SAFE;
            words.add(
                    "NOT SAFE: " + f.violations() + " violation(s), under a fault " + r.tier() + " claims to survive");
        } else {
            status = NOT_CLAIMED;
            words.add("not safe: " + f.violations() + " violation(s); " + notClaimed(r, f));
        }
        if (f.unavailableMs() != null) {
            words.add("nobody could take the lock for up to " + seconds(f.unavailableMs()));
        }
        if (f.recoveryMs() != null) {
            words.add("a client held it again " + seconds(f.recoveryMs()) + " after the fault "
                    + (f.recoveryFromStart() ? "began" : "ended"));
        } else {
            words.add(f.recovery());
        }
        return new FaultVerdict(f.kind(), f.label(), status, String.join("; ", words));
    }

    /** Why violations under {@code f} do not break the row's claims. */
    private static String notClaimed(BackendResult r, FaultResult f) {
        return f.kind().equals(FaultKind.CLOCK.label)
                ? "a clock 50% fast is beyond the drift any provider declares, where only fences protect"
                : r.tier() + " does not claim to survive " + f.label();
    }

    /**
     * One sentence: under which faults the row stayed safe, where it did not (and whether its tier claims
     * it), the real holder's writes refused, the longest time nobody could take the lock, and whether the
     * holds were shared fairly.
     */
    static String summary(BackendResult r) {
        if (!r.started()) {
            return "unavailable: " + r.unavailableReason();
        }
        List<String> safe = new ArrayList<>();
        List<String> parts = new ArrayList<>();
        double worst = 0;
        String worstFault = "";
        for (FaultResult f : r.faults()) {
            if (f.skipped()) {
                parts.add(f.label() + " skipped");
                continue;
            }
            if (f.violations() == 0) {
                safe.add(f.label());
            } else if (f.tolerated()) {
                parts.add("NOT SAFE under " + f.label() + " (" + f.violations() + " violations)");
            } else {
                parts.add(f.label() + ": " + f.violations()
                        + (f.kind().equals(FaultKind.CLOCK.label)
                                ? " violations; " + notClaimed(r, f)
                                : " violations, which " + r.tier() + " does not claim to survive"));
            }
            if (f.unavailableMs() != null && f.unavailableMs() > worst) {
                worst = f.unavailableMs();
                worstFault = f.label();
            }
        }
        if (r.invariantBroken() && parts.stream().noneMatch(p -> p.startsWith("NOT SAFE"))) {
            parts.add("NOT SAFE outside the faults");
        }
        if (!safe.isEmpty()) {
            parts.add(0, "safe under " + String.join(", ", safe));
        } else if (r.faults().isEmpty() && !r.invariantBroken()) {
            parts.add(0, "safe (no faults run)");
        }
        if (r.ownWritesRefused() > 0) {
            parts.add("the real holder's writes refused " + r.ownWritesRefused() + " times (fences went back)");
        }
        if (!worstFault.isEmpty()) {
            parts.add("nobody could take the lock for up to " + Durations.ms(worst) + " ms (" + worstFault + ")");
        }
        if (!Double.isNaN(r.jainIndex())) {
            parts.add(
                    r.jainIndex() >= FAIR_JAIN
                            ? "fair (Jain " + ratio(r.jainIndex()) + ")"
                            : "UNFAIR: Jain " + ratio(r.jainIndex()) + ", fewest/most holds " + ratio(r.minMaxShare()));
        }
        return String.join("; ", parts);
    }

    /** {@code 150 ms}, {@code 2.1 s}. */
    static String seconds(double ms) {
        return ms < 1000 ? Durations.ms(ms) + " ms" : String.format(Locale.ROOT, "%.1f s", ms / 1000);
    }

    static String ratio(double r) {
        return Double.isNaN(r) ? "-" : String.format(Locale.ROOT, "%.2f", r);
    }
}
