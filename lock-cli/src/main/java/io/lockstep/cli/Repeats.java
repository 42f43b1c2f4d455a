package io.lockstep.cli;

import io.lockstep.cli.CompareReport.BackendResult;
import io.lockstep.cli.CompareReport.FaultResult;
import io.lockstep.cli.CompareReport.Spread;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** The spread of each figure over {@code compare --repeat N} runs: median, least and most, per backend. */
final class Repeats {
    private Repeats() {}

    /** The figures summarised, by column name. */
    static final Map<String, ToDoubleFunction<BackendResult>> FIGURES = figures();

    private static Map<String, ToDoubleFunction<BackendResult>> figures() {
        Map<String, ToDoubleFunction<BackendResult>> m = new LinkedHashMap<>();
        m.put("acquired", r -> r.acquisitions());
        m.put("uncontended p50 ms", BackendResult::uncontendedP50Ms);
        m.put("wait p50 ms", BackendResult::waitP50Ms);
        m.put("wait p99 ms", BackendResult::waitP99Ms);
        m.put("Jain", BackendResult::jainIndex);
        return m;
    }

    /**
     * One {@link Spread} per backend and figure, and per backend and fault for recovery; {@code runs} holds
     * every run's rows, in the same order each time. Figures not measured in a run (NaN, no recovery) are
     * left out of that figure's spread and counted as missing.
     */
    static List<Spread> of(List<List<BackendResult>> runs, List<String> faults) {
        List<Spread> out = new ArrayList<>();
        if (runs.isEmpty()) {
            return out;
        }
        for (int row = 0; row < runs.get(0).size(); row++) {
            String backend = runs.get(0).get(row).backend();
            for (Map.Entry<String, ToDoubleFunction<BackendResult>> figure : FIGURES.entrySet()) {
                List<Double> values = new ArrayList<>();
                for (List<BackendResult> run : runs) {
                    if (row < run.size() && run.get(row).started()) {
                        values.add(figure.getValue().applyAsDouble(run.get(row)));
                    }
                }
                out.add(spread(backend, figure.getKey(), values, runs.size()));
            }
            for (String kind : faults) {
                List<Double> values = new ArrayList<>();
                for (List<BackendResult> run : runs) {
                    if (row < run.size()) {
                        for (FaultResult f : run.get(row).faults()) {
                            if (f.kind().equals(kind) && f.recoveryMs() != null) {
                                values.add(f.recoveryMs());
                            }
                        }
                    }
                }
                out.add(spread(backend, "recovery " + kind + " ms", values, runs.size()));
            }
        }
        return out;
    }

    static Spread spread(String backend, String figure, List<Double> raw, int runs) {
        List<Double> values =
                new ArrayList<>(raw.stream().filter(v -> !Double.isNaN(v)).toList());
        values.sort(null);
        int n = values.size();
        if (n == 0) {
            return new Spread(backend, figure, Double.NaN, Double.NaN, Double.NaN, runs);
        }
        double median = n % 2 == 1 ? values.get(n / 2) : (values.get(n / 2 - 1) + values.get(n / 2)) / 2;
        return new Spread(backend, figure, median, values.get(0), values.get(n - 1), runs - n);
    }
}
