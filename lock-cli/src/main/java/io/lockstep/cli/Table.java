package io.lockstep.cli;

import io.lockstep.cli.CompareReport.BackendResult;
import io.lockstep.cli.CompareReport.FaultResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** The comparison as a plain-text table, one row per backend, and notes below it. */
final class Table {
    private Table() {}

    private static final List<String> HEADER = List.of(
            "backend",
            "tier",
            "acquired",
            "uncontended p50 ms",
            "wait p50/p99 ms",
            "timeouts",
            "longest wait ms",
            "holds min/max",
            "Jain",
            "stale writes accepted/fenced off",
            "own writes refused",
            "overlaps",
            "errors");

    private static final List<String> FAULT_HEADER = List.of(
            "fault window",
            "fault",
            "started ms",
            "lasted ms",
            "restart ms",
            "recovery ms",
            "unavailable ms",
            "violations");

    static String render(CompareReport report) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(HEADER);
        for (BackendResult r : report.backends()) {
            if (!r.started()) {
                List<String> row = new ArrayList<>(List.of(r.backend(), r.tier(), "UNAVAILABLE"));
                while (row.size() < HEADER.size()) {
                    row.add("-");
                }
                rows.add(row);
                continue;
            }
            rows.add(List.of(
                    r.backend(),
                    r.tier(),
                    Long.toString(r.acquisitions()),
                    Durations.ms(r.uncontendedP50Ms()),
                    Durations.ms(r.waitP50Ms()) + " / " + Durations.ms(r.waitP99Ms()),
                    Long.toString(r.timeouts()),
                    Durations.ms(r.longestWaitMs()),
                    ratio(r.minMaxShare()),
                    ratio(r.jainIndex()),
                    staleWrites(r),
                    Long.toString(r.ownWritesRefused()),
                    Long.toString(r.overlappingHolds()),
                    Long.toString(r.errors().values().stream()
                            .mapToLong(Long::longValue)
                            .sum())));
        }
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "%nlockctl compare: %s per backend, %d clients, lease %s, hold %s, seed %d%n",
                report.duration(),
                report.clients(),
                report.leaseTime(),
                report.holdTime(),
                report.seed()));
        out.append(
                        report.schedule().isEmpty()
                                ? "no faults"
                                : "faults, each " + report.faultLength() + ", at the same times on every row: "
                                        + report.schedule().stream()
                                                .map(f -> f.kind() + " at " + Durations.ms(f.startMs()) + " ms")
                                                .collect(Collectors.joining(", ")))
                .append('\n');
        if (report.interrupted()) {
            out.append("INTERRUPTED (Ctrl-C): the figures below are what was measured until then\n");
        }
        out.append('\n');
        grid(out, rows);
        List<List<String>> windows = new ArrayList<>();
        windows.add(FAULT_HEADER);
        for (BackendResult r : report.backends()) {
            for (FaultResult f : r.faults()) {
                windows.add(List.of(
                        r.backend(),
                        f.label(),
                        f.skipped() ? "-" : Durations.ms(f.startMs()),
                        f.skipped() ? "-" : Durations.ms(f.endMs() - f.startMs()),
                        f.restartMs() == null ? "-" : Durations.ms(f.restartMs()),
                        recovery(f),
                        f.unavailableMs() == null ? "-" : Durations.ms(f.unavailableMs()),
                        f.skipped() ? "-" : Long.toString(f.violations())));
            }
        }
        if (windows.size() > 1) {
            out.append('\n');
            grid(out, windows);
            out.append(
                    "recovery: from the fault's end (from its start for a frozen or cut-off holder, a failover or a leader"
                            + " fault) to the next acquisition inside the fault's window; unavailable: the longest time in"
                            + " the window without an acquisition\n");
        }
        if (report.runs() > 1) {
            out.append('\n');
            grid(out, spreadRows(report));
            out.append("over " + report.runs() + " runs: median [least-most]; the table above is the last run\n");
        }
        out.append('\n');
        for (BackendResult r : report.backends()) {
            if (!r.started()) {
                out.append(r.backend())
                        .append(": unavailable: ")
                        .append(r.unavailableReason())
                        .append(r.install() == null || r.install().isEmpty() ? "" : "\n    install: " + r.install())
                        .append('\n');
                continue;
            }
            Verdicts.Verdict verdict = Verdicts.of(r);
            out.append(r.backend())
                    .append(": verdict: ")
                    .append(verdict.summary())
                    .append('\n');
            for (Verdicts.FaultVerdict f : verdict.faults()) {
                out.append(r.backend())
                        .append(": under ")
                        .append(f.label())
                        .append(": ")
                        .append(f.words())
                        .append('\n');
            }
            out.append(r.backend())
                    .append(": holds per client ")
                    .append(r.holdsPerClient().values().stream()
                            .map(String::valueOf)
                            .collect(Collectors.joining(" ")))
                    .append('\n');
            for (FaultResult f : r.faults()) {
                String why = f.skipped() ? f.recovery() : f.note();
                if (!why.isEmpty()) {
                    out.append(r.backend())
                            .append(": ")
                            .append(f.label())
                            .append(": ")
                            .append(why)
                            .append('\n');
                }
            }
            if (!r.errors().isEmpty()) {
                out.append(r.backend())
                        .append(": errors: ")
                        .append(r.errors().entrySet().stream()
                                .map(Map.Entry::toString)
                                .collect(Collectors.joining(", ")))
                        .append('\n');
            }
            for (String v : r.violations()) {
                out.append(r.backend())
                        .append(": ")
                        .append(v.lines().findFirst().orElse(v))
                        .append('\n');
            }
            long more = r.overlappingHolds()
                    + r.fencesNotIncreasing()
                    - r.violations().size();
            if (more > 0) {
                out.append(r.backend()).append(": ... and ").append(more).append(" more like these\n");
            }
            if (r.invariantBroken()) {
                out.append(r.backend()).append(": INVARIANT BROKEN under faults its tier claims to survive\n");
            }
        }
        return out.toString();
    }

    /** One row per backend, one column per figure: {@code median [least-most]}, {@code -} if never measured. */
    private static List<List<String>> spreadRows(CompareReport report) {
        List<String> header = new ArrayList<>(List.of("over " + report.runs() + " runs"));
        Map<String, List<String>> rows = new java.util.LinkedHashMap<>();
        for (CompareReport.Spread s : report.spread()) {
            if (!header.contains(s.figure())) {
                header.add(s.figure());
            }
            String cell = Double.isNaN(s.median())
                    ? "-"
                    : Durations.ms(s.median()) + " [" + Durations.ms(s.min()) + "-" + Durations.ms(s.max()) + "]"
                            + (s.missing() > 0 ? " (" + s.missing() + " -)" : "");
            rows.computeIfAbsent(s.backend(), b -> new ArrayList<>(List.of(b))).add(cell);
        }
        List<List<String>> out = new ArrayList<>();
        out.add(header);
        out.addAll(rows.values());
        return out;
    }

    /** {@code accepted / fenced off}, or {@code - / -} when no client wrote after losing the lock. */
    private static String staleWrites(BackendResult r) {
        if (r.staleWrites() == 0) {
            return "- / -";
        }
        String accepted =
                r.fencing() ? Long.toString(r.staleWritesAccepted()) : r.staleWritesAccepted() + " (no fences)";
        return accepted + " / " + r.staleWritesRejectedByFence();
    }

    private static String recovery(FaultResult f) {
        if (f.skipped()) {
            return "skipped";
        }
        if (f.recoveryMs() != null) {
            return Durations.ms(f.recoveryMs());
        }
        return f.recovery().equals(Analysis.NOT_RECOVERED_END) ? "not before the end" : "not before the next fault";
    }

    private static String ratio(double r) {
        return Double.isNaN(r) ? "-" : String.format(Locale.ROOT, "%.2f", r);
    }

    static void grid(StringBuilder out, List<List<String>> rows) {
        int[] width = new int[rows.get(0).size()];
        for (List<String> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                width[i] = Math.max(width[i], row.get(i).length());
            }
        }
        for (int r = 0; r < rows.size(); r++) {
            List<String> row = rows.get(r);
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.size(); i++) {
                line.append(i == 0 ? "" : " | ")
                        .append(pad(
                                row.get(i),
                                width[i],
                                i > 0 && !rows.get(0).get(i).equals("tier")));
            }
            out.append(line.toString().stripTrailing()).append('\n');
            if (r == 0) {
                out.append("-".repeat(line.toString().stripTrailing().length())).append('\n');
            }
        }
    }

    private static String pad(String s, int width, boolean right) {
        String fill = " ".repeat(width - s.length());
        return right ? fill + s : s + fill;
    }
}
