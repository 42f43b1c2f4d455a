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
            "acquire p50/p99 ms (incl. wait)",
            "handoff p50/p99 ms",
            "per s",
            "stale writes accepted",
            "stale writes fenced off",
            "overlaps",
            "errors");

    static String render(CompareReport report) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(HEADER);
        for (BackendResult r : report.backends()) {
            if (!r.started()) {
                rows.add(List.of(r.backend(), r.tier(), "-", "-", "-", "-", "-", "-", "-", "unavailable"));
                continue;
            }
            rows.add(List.of(
                    r.backend(),
                    r.tier(),
                    Long.toString(r.acquisitions()),
                    Durations.ms(r.acquireP50Ms()) + " / " + Durations.ms(r.acquireP99Ms()),
                    Durations.ms(r.handoffP50Ms()) + " / " + Durations.ms(r.handoffP99Ms()),
                    String.format(Locale.ROOT, "%.0f", r.throughputPerS()),
                    r.fencing() ? Long.toString(r.staleWritesAccepted()) : r.staleWritesAccepted() + " (no fences)",
                    Long.toString(r.staleWritesRejectedByFence()),
                    Long.toString(r.overlappingHolds()),
                    Long.toString(r.errors().values().stream()
                            .mapToLong(Long::longValue)
                            .sum())));
        }
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "%nlockctl compare: %s per backend, %d clients, lease %s, hold %s, faults %s (each %s), seed %d%n%n",
                report.duration(),
                report.clients(),
                report.leaseTime(),
                report.holdTime(),
                report.faults().isEmpty() ? "none" : String.join(", ", report.faults()),
                report.faultLength(),
                report.seed()));
        grid(out, rows);
        if (!report.faults().isEmpty()) {
            List<List<String>> recovery = new ArrayList<>();
            List<String> header = new ArrayList<>(List.of("recovery ms"));
            header.addAll(report.faults());
            recovery.add(header);
            for (BackendResult r : report.backends()) {
                if (!r.started()) {
                    continue;
                }
                List<String> row = new ArrayList<>(List.of(r.backend()));
                for (String kind : report.faults()) {
                    row.add(r.faults().stream()
                            .filter(f -> f.kind().equals(kind))
                            .findFirst()
                            .map(f -> f.recoveryMs() == null ? "none" : Durations.ms(f.recoveryMs()))
                            .orElse("not run"));
                }
                recovery.add(row);
            }
            out.append('\n');
            grid(out, recovery);
        }
        out.append('\n');
        for (BackendResult r : report.backends()) {
            if (!r.started()) {
                out.append(r.backend())
                        .append(": could not start: ")
                        .append(r.unavailableReason())
                        .append(r.install() == null || r.install().isEmpty() ? "" : "\n    install: " + r.install())
                        .append('\n');
                continue;
            }
            for (FaultResult f : r.faults()) {
                if (!f.note().isEmpty()) {
                    out.append(r.backend())
                            .append(": ")
                            .append(f.label())
                            .append(": ")
                            .append(f.note())
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

    private static void grid(StringBuilder out, List<List<String>> rows) {
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
