package io.lockstep.cli;

import io.lockstep.cli.CompareReport.BackendResult;
import io.lockstep.cli.CompareReport.FaultResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Two saved runs side by side: for each row in both (matched by its label), each figure of {@code --repeat}'s
 * summary, the recovery and unavailable time per fault, and the verdict, in the baseline and in the run, with
 * the change. Rows in only one of the runs are named.
 */
final class RunDiff {
    private RunDiff() {}

    static String render(CompareReport run, Path runFile, CompareReport baseline, Path baselineFile) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("backend", "figure", "baseline", "run", "change"));
        List<String> onlyOne = new ArrayList<>();
        for (BackendResult r : run.backends()) {
            BackendResult b = baseline.backends().stream()
                    .filter(x -> x.backend().equals(r.backend()))
                    .findFirst()
                    .orElse(null);
            if (b == null) {
                onlyOne.add(r.backend() + " is only in " + runFile.getFileName());
                continue;
            }
            rows.add(List.of(
                    r.backend(),
                    "verdict",
                    Verdicts.of(b).status(),
                    Verdicts.of(r).status(),
                    changed(b, r)));
            if (!r.started() || !b.started()) {
                continue;
            }
            for (Map.Entry<String, ToDoubleFunction<BackendResult>> f : Repeats.FIGURES.entrySet()) {
                rows.add(figure(
                        r.backend(),
                        f.getKey(),
                        f.getValue().applyAsDouble(b),
                        f.getValue().applyAsDouble(r)));
            }
            for (FaultResult f : r.faults()) {
                FaultResult g = b.faults().stream()
                        .filter(x -> x.kind().equals(f.kind()))
                        .findFirst()
                        .orElse(null);
                if (g == null) {
                    continue;
                }
                rows.add(figure(
                        r.backend(), "recovery " + f.label() + " ms", value(g.recoveryMs()), value(f.recoveryMs())));
                rows.add(figure(
                        r.backend(),
                        "unavailable " + f.label() + " ms",
                        value(g.unavailableMs()),
                        value(f.unavailableMs())));
                rows.add(figure(r.backend(), "violations " + f.label(), g.violations(), f.violations()));
            }
        }
        for (BackendResult b : baseline.backends()) {
            if (run.backends().stream().noneMatch(x -> x.backend().equals(b.backend()))) {
                onlyOne.add(b.backend() + " is only in " + baselineFile.getFileName());
            }
        }
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "%nlockctl report: %s (run) against %s (baseline)%n",
                runFile.getFileName(),
                baselineFile.getFileName()));
        if (run.seed() != baseline.seed() || !run.faults().equals(baseline.faults())) {
            out.append("note: the runs differ in seed or faults (" + baseline.seed() + " " + baseline.faults() + " / "
                    + run.seed() + " " + run.faults() + "): the fault windows are not the same\n");
        }
        out.append('\n');
        Table.grid(out, rows);
        onlyOne.forEach(l -> out.append(l).append('\n'));
        out.append("change: (run - baseline) / baseline; '-' where a figure was not measured in one of the runs\n");
        return out.toString();
    }

    private static String changed(BackendResult b, BackendResult r) {
        return Objects.equals(Verdicts.of(b).status(), Verdicts.of(r).status()) ? "same" : "CHANGED";
    }

    private static double value(Double d) {
        return d == null ? Double.NaN : d;
    }

    private static List<String> figure(String backend, String name, double baseline, double run) {
        String change;
        if (Double.isNaN(baseline) || Double.isNaN(run)) {
            change = "-";
        } else if (baseline == 0) {
            change = run == 0 ? "0%" : "new";
        } else {
            double percent = (run - baseline) / baseline * 100;
            change = Math.abs(percent) < 0.5 ? "0%" : String.format(Locale.ROOT, "%+.0f%%", percent);
        }
        return List.of(backend, name, number(baseline), number(run), change);
    }

    /** A count as a whole number, a time as {@link Durations#ms} prints it. */
    private static String number(double v) {
        if (!Double.isNaN(v) && v == Math.rint(v) && Math.abs(v) < 1e12) {
            return Long.toString((long) v);
        }
        return Durations.ms(v);
    }
}
