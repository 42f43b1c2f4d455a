package io.lockstep.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * {@link EtcdBenchmark}'s {@code -p backend=turns}: the floor, jetcd's {@code Lock} and lock-etcd in one trial
 * on one member, taking turns by iteration (floor, {@code Lock}, lock-etcd; then the other way round; and
 * so on), every benchmark thread running the contender whose turn it is. A machine whose speed drifts over
 * minutes (shared cores: etcd's CPU per operation moved by half between trials of the same command a few
 * minutes apart, 2026-11-30) then moves all three alike, and each cycle of three measured iterations gives
 * lock-etcd's time ÷ the floor's and ÷ {@code Lock}'s seconds apart rather than minutes. Each contender's
 * messages at the server, etcd's CPU and this process's are summed over its own measured iterations.
 *
 * <p>Warm-up iterations take turns too, so all three are compiled alike; give the measurement a multiple of
 * three iterations ({@code -i 15}): an incomplete last cycle is left out of the ratios.
 */
final class Turns {

    /** The {@code backend} parameter value that selects turns. */
    static final String NAME = "turns";

    /** The contenders in their first cycle's order; lock-etcd last, the ratios' numerator. */
    static final List<String> CONTENDERS = List.of("jetcd-floor", "jetcd-lock", "etcd");

    private static final String MINE = "etcd";

    private int warmups;
    private int measured;
    private String current = CONTENDERS.get(0);
    private boolean measuring;
    private long startNanos;
    private long startOperations;
    private Map<String, Long> startReceived = Map.of();
    private double[] startWork = new double[3];
    private ClientWork startClient = ClientWork.now();

    /** Per contender: µs per operation of each measured iteration, in cycle order. */
    private final Map<String, List<Double>> micros = new LinkedHashMap<>();

    private final Map<String, Map<String, Long>> messages = new HashMap<>();
    private final Map<String, Long> operations = new HashMap<>();
    private final Map<String, double[]> serverWork = new HashMap<>();
    private final Map<String, long[]> clientWork = new HashMap<>();

    Turns() {
        for (String c : CONTENDERS) {
            micros.put(c, new ArrayList<>());
            messages.put(c, new TreeMap<>());
            operations.put(c, 0L);
            serverWork.put(c, new double[3]);
            clientWork.put(c, new long[2]);
        }
    }

    /** Before an iteration: whose turn it is; reads the counters the iteration's figures start from. */
    String begin(IterationParams params, String endpoint, long operationsSoFar) {
        measuring = params.getType() == IterationType.MEASUREMENT;
        int index = measuring ? measured++ : warmups++;
        int cycle = index / CONTENDERS.size();
        int position = index % CONTENDERS.size();
        current = CONTENDERS.get(cycle % 2 == 0 ? position : CONTENDERS.size() - 1 - position);
        if (measuring) {
            startReceived = EtcdCounters.received(endpoint);
            startWork = EtcdCounters.work(endpoint);
            startClient = ClientWork.now();
        }
        startOperations = operationsSoFar;
        startNanos = System.nanoTime();
        return current;
    }

    /** After an iteration: adds what it did to its contender's figures (measured iterations only). */
    void end(IterationParams params, String endpoint, long operationsSoFar, int threads) {
        long nanos = System.nanoTime() - startNanos;
        if (!measuring) {
            return;
        }
        long n = operationsSoFar - startOperations;
        if (n <= 0) {
            throw new IllegalStateException("a measured turn of " + current + " counted no operations");
        }
        micros.get(current).add(nanos / 1e3 * threads / n);
        operations.merge(current, n, Long::sum);
        Map<String, Long> sums = messages.get(current);
        EtcdCounters.received(endpoint)
                .forEach((method, count) ->
                        sums.merge(method, count - startReceived.getOrDefault(method, 0L), Long::sum));
        double[] work = EtcdCounters.work(endpoint);
        double[] workSums = serverWork.get(current);
        for (int i = 0; i < work.length; i++) {
            workSums[i] += work[i] - startWork[i];
        }
        ClientWork client = ClientWork.now();
        long[] clientSums = clientWork.get(current);
        clientSums[0] += client.cpuNanos() - startClient.cpuNanos();
        clientSums[1] += client.compileMillis() - startClient.compileMillis();
    }

    /** gRPC messages etcd received per operation of {@code contender}, over its measured turns. */
    Map<String, Double> messagesPerOperation(String contender) {
        return EtcdCounters.perOperation(Map.of(), messages.get(contender), operations.get(contender));
    }

    /** Every cycle's figures and ratios, their medians, and each contender's work, as printed lines. */
    String report() {
        StringBuilder out = new StringBuilder();
        int cycles =
                CONTENDERS.stream().mapToInt(c -> micros.get(c).size()).min().orElse(0);
        out.append(String.format(
                Locale.ROOT,
                "%nturns: µs per operation in each cycle (%s, the order reversed every other cycle)%n",
                String.join(", ", CONTENDERS)));
        Map<String, List<Double>> ratios = new LinkedHashMap<>();
        for (String other : CONTENDERS) {
            if (!other.equals(MINE)) {
                ratios.put(other, new ArrayList<>());
            }
        }
        for (int k = 0; k < cycles; k++) {
            StringBuilder line = new StringBuilder("  cycle " + (k + 1) + ":");
            for (String c : CONTENDERS) {
                line.append(
                        String.format(Locale.ROOT, " %s %.1f", c, micros.get(c).get(k)));
            }
            double mine = micros.get(MINE).get(k);
            for (Map.Entry<String, List<Double>> e : ratios.entrySet()) {
                double ratio = mine / micros.get(e.getKey()).get(k);
                e.getValue().add(ratio);
                line.append(String.format(Locale.ROOT, "; %s ÷ %s %.2f×", MINE, e.getKey(), ratio));
            }
            out.append(line).append('\n');
        }
        ratios.forEach((other, values) -> out.append(String.format(
                Locale.ROOT,
                "turns: %s ÷ %s, median of %d cycles %.2f× (range %.2f×–%.2f×)%n",
                MINE,
                other,
                values.size(),
                values.isEmpty()
                        ? Double.NaN
                        : RatioRounds.median(values.stream().mapToDouble(d -> d).toArray()),
                values.stream().mapToDouble(d -> d).min().orElse(Double.NaN),
                values.stream().mapToDouble(d -> d).max().orElse(Double.NaN))));
        for (String c : CONTENDERS) {
            long n = operations.get(c);
            long[] client = clientWork.get(c);
            out.append(String.format(
                    Locale.ROOT,
                    "turns, %s over its measured turns (%d operations): etcd %s; this process %.0f µs of CPU per"
                            + " operation, %d ms of JIT compiling; messages per operation %s%n",
                    c,
                    n,
                    EtcdCounters.describeWork(new double[3], serverWork.get(c), Math.max(1, n)),
                    client[0] / 1e3 / Math.max(1, n),
                    client[1],
                    n > 0 ? messagesPerOperation(c) : Map.of()));
        }
        return out.toString();
    }
}
