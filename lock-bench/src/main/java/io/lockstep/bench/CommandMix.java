package io.lockstep.bench;

import com.google.gson.Gson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.openjdk.jmh.infra.BenchmarkParams;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * What the redis-server processes of one trial were asked to do per measured operation, from
 * {@code INFO commandstats}: the proof that a benchmark measures what its name says.
 *
 * <p>Redis counts the commands a Lua script calls as well as the {@code EVALSHA} that ran it, so the
 * mix of one operation is a fingerprint of the scripts it ran: lock-redlock's acquire calls
 * {@code TIME}, {@code GET} twice and {@code SET} twice, lock-redis's calls {@code GET}, {@code SET}
 * and {@code INCR}, a hand-written {@code SET NX PX} lock none of these. {@link #start} resets the
 * counters of each server (after the clients connected); {@link #check} divides what each server saw
 * by the operations the benchmark counted and throws if a command expected on every node is off by
 * more than a small tolerance, or a command not expected at all came at {@value #NOISE} per
 * operation or more. Connection set-up and the monitoring itself ({@link #SET_UP}) are not counted.
 *
 * <p>Not thread-safe: used from JMH's trial set-up and tear-down only.
 */
final class CommandMix {

    /** Per operation: below this a command is set-up or monitoring, not part of an operation. */
    static final double NOISE = 0.01;

    /** Servers whose counts per operation differ by at most this fraction are described as one. */
    static final double ALIKE_FRACTION = 0.05;

    /**
     * Connection set-up and monitoring, never part of an operation: a client opens a bounded number of
     * connections (each may say {@code CLIENT SETINFO}, {@code HELLO}, {@code PING}, {@code INFO}), and
     * this class's own calls; with few operations (a slow network) they can pass {@link #NOISE}.
     */
    static final Set<String> SET_UP = Set.of(
            "client|setinfo",
            "client|setname",
            "hello",
            "auth",
            "ping",
            "select",
            "info",
            "script|load",
            "script|exists",
            "config|resetstat",
            "config|get",
            "subscribe",
            "unsubscribe",
            "psubscribe",
            "punsubscribe");

    /** Where {@link #record} appends one JSON line per trial: a system property, else this environment variable. */
    static final String RECORD_PROPERTY = "lockstep.bench.mix";

    static final String RECORD_ENV = "LOCKSTEP_BENCH_MIX";

    private final List<HostAndPort> servers;

    private CommandMix(List<HostAndPort> servers) {
        this.servers = List.copyOf(servers);
    }

    /** Resets the command counters of every server in {@code servers} (addressed directly, never through a proxy). */
    static CommandMix start(List<HostAndPort> servers) {
        CommandMix mix = new CommandMix(servers);
        for (HostAndPort server : servers) {
            try (Jedis jedis = new Jedis(server)) {
                jedis.configResetStat();
            }
        }
        return mix;
    }

    /** The calls of each command per operation, one map per server (in the order given to {@link #start}). */
    List<Map<String, Double>> perOperation(long operations) {
        if (operations <= 0) {
            throw new IllegalStateException("the benchmark counted no operations; nothing to check");
        }
        List<Map<String, Double>> out = new ArrayList<>();
        for (HostAndPort server : servers) {
            Map<String, Long> calls;
            try (Jedis jedis = new Jedis(server)) {
                calls = parse(jedis.info("commandstats"));
            }
            Map<String, Double> perOp = new TreeMap<>();
            calls.forEach((command, n) -> perOp.put(command, n / (double) operations));
            out.add(perOp);
        }
        return out;
    }

    /** {@code cmdstat_<command>:calls=N,...} lines to command → calls. */
    static Map<String, Long> parse(String commandstats) {
        Map<String, Long> calls = new TreeMap<>();
        for (String line : commandstats.split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            int colon = line.indexOf(':');
            String command = line.substring("cmdstat_".length(), colon).toLowerCase(Locale.ROOT);
            for (String field : line.substring(colon + 1).split(",")) {
                if (field.startsWith("calls=")) {
                    calls.put(command, Long.parseLong(field.substring("calls=".length())));
                }
            }
        }
        return calls;
    }

    /**
     * Checks the mix against {@code expected}, the calls per operation every server must see, and
     * returns it as one line to print beside the figures.
     *
     * @throws IllegalStateException naming the benchmark, the server and the commands that differ
     */
    static String check(String benchmark, Map<String, Double> expected, List<Map<String, Double>> perServer) {
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < perServer.size(); i++) {
            Map<String, Double> seen = perServer.get(i);
            for (Map.Entry<String, Double> e : expected.entrySet()) {
                double got = seen.getOrDefault(e.getKey(), 0.0);
                // lock-redlock also sends TIME three times on each new connection, to learn the node's
                // clock offset; a short trial opens enough connections to show it.
                double setUp = e.getKey().equals("time") ? 0.1 : 0.0;
                if (Math.abs(got - e.getValue()) > NOISE + 0.01 * e.getValue() + setUp) {
                    problems.add("node " + (i + 1) + ": " + e.getKey() + " " + format(got) + " per operation, expected "
                            + format(e.getValue()));
                }
            }
            for (Map.Entry<String, Double> e : seen.entrySet()) {
                if (!expected.containsKey(e.getKey()) && !SET_UP.contains(e.getKey()) && e.getValue() >= NOISE) {
                    problems.add("node " + (i + 1) + ": " + e.getKey() + " " + format(e.getValue())
                            + " per operation, not expected at all");
                }
            }
        }
        String line = describe(perServer);
        if (!problems.isEmpty()) {
            throw new IllegalStateException(benchmark + " is not what its name says: " + String.join("; ", problems)
                    + ". Seen per operation: " + line);
        }
        return line;
    }

    /**
     * One line: the commands per operation, {@code "evalsha 2, get 3, ..."} when every server saw the
     * same (within {@link #ALIKE_FRACTION}), else one group per server. Commands below {@link #NOISE} are left out.
     */
    static String describe(List<Map<String, Double>> perServer) {
        if (perServer.size() == 1) {
            return describeOne(perServer.get(0));
        }
        Map<String, Double> mean = new TreeMap<>();
        boolean alike = true;
        for (Map<String, Double> server : perServer) {
            for (String command : union(perServer)) {
                double v = server.getOrDefault(command, 0.0);
                mean.merge(command, v / perServer.size(), Double::sum);
                for (Map<String, Double> other : perServer) {
                    double w = other.getOrDefault(command, 0.0);
                    // A Redlock round retried on one slow node (a busy machine) adds a few percent there.
                    alike &= Math.abs(v - w) <= Math.max(2 * NOISE, ALIKE_FRACTION * Math.max(v, w));
                }
            }
        }
        if (alike) {
            return "on each of " + perServer.size() + " nodes: " + describeOne(mean);
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < perServer.size(); i++) {
            out.add("node " + (i + 1) + ": " + describeOne(perServer.get(i)));
        }
        return String.join("; ", out);
    }

    private static Set<String> union(List<Map<String, Double>> perServer) {
        Set<String> all = new java.util.TreeSet<>();
        perServer.forEach(m -> all.addAll(m.keySet()));
        return all;
    }

    private static String describeOne(Map<String, Double> perOp) {
        // Scripts first (they are the round trips), then what ran inside them or on its own.
        Map<String, Double> ordered = new LinkedHashMap<>();
        perOp.entrySet().stream()
                .filter(e -> e.getValue() >= NOISE && !SET_UP.contains(e.getKey()))
                .sorted((a, b) -> Boolean.compare(!isScriptCall(a.getKey()), !isScriptCall(b.getKey())))
                .forEach(e -> ordered.put(e.getKey(), e.getValue()));
        return ordered.entrySet().stream()
                .map(e -> e.getKey() + " " + format(e.getValue()))
                .collect(Collectors.joining(", "));
    }

    private static boolean isScriptCall(String command) {
        return command.equals("evalsha") || command.equals("eval") || command.startsWith("fcall");
    }

    static String format(double perOp) {
        return String.format(Locale.ROOT, "%.2f", perOp);
    }

    /**
     * Appends one JSON line for the report (to the file named by the system property
     * {@value #RECORD_PROPERTY} or the environment variable {@value #RECORD_ENV}; nothing if neither
     * is set): benchmark, parameters, threads, operations, redis version, the mix per server.
     */
    static void record(MixRecord record) {
        String target = System.getProperty(RECORD_PROPERTY, System.getenv(RECORD_ENV));
        if (target == null || target.isBlank()) {
            return;
        }
        try {
            Files.writeString(
                    Path.of(target),
                    new Gson().toJson(record) + "\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("could not append the command mix to " + target, e);
        }
    }

    /**
     * Records what a non-Redis server saw per operation (etcd's gRPC messages, ZooKeeper's packets,
     * PostgreSQL's counters) for the report, in the same form as a Redis trial's mix.
     *
     * @param params the trial's JMH parameters (benchmark, params, threads)
     * @param operations the operations the trial counted
     * @param server what served them and its version, for example {@code "etcd 3.5.16"}
     * @param perOperation what the server saw per operation, already checked by the caller
     */
    static void recordSeen(BenchmarkParams params, long operations, String server, Map<String, Double> perOperation) {
        Map<String, String> paramMap = new LinkedHashMap<>();
        for (String key : params.getParamsKeys()) {
            paramMap.put(key, params.getParam(key));
        }
        Map<String, Double> seen = new TreeMap<>(perOperation);
        String line = seen.entrySet().stream()
                .filter(e -> e.getValue() >= NOISE)
                .map(e -> e.getKey() + " " + format(e.getValue()))
                .collect(Collectors.joining(", "));
        record(new MixRecord(
                params.getBenchmark(),
                paramMap,
                params.getThreads(),
                operations,
                server,
                List.of(seen),
                line.isEmpty() ? "nothing" : line));
    }

    /**
     * One trial's mix as the report reads it.
     *
     * @param benchmark JMH's benchmark name
     * @param params JMH's parameters
     * @param threads benchmark threads
     * @param operations operations counted over warm-up and measurement
     * @param redisVersion the servers' {@code redis_version}
     * @param perServer calls per operation of each command, per server
     * @param mix the same as one line
     */
    record MixRecord(
            String benchmark,
            Map<String, String> params,
            int threads,
            long operations,
            String redisVersion,
            List<Map<String, Double>> perServer,
            String mix) {}

    /** The {@code redis_version} of the first server. */
    String redisVersion() {
        try (Jedis jedis = new Jedis(servers.get(0))) {
            for (String line : jedis.info("server").split("\r?\n")) {
                if (line.startsWith("redis_version:")) {
                    return line.substring("redis_version:".length()).strip();
                }
            }
        }
        return "unknown";
    }

    /** Whether every server has every script of {@code shas} in its cache (it ran that exact text). */
    List<String> missingScripts(List<String> shas) {
        List<String> missing = new ArrayList<>();
        if (shas.isEmpty()) {
            return missing;
        }
        for (int i = 0; i < servers.size(); i++) {
            try (Jedis jedis = new Jedis(servers.get(i))) {
                List<Boolean> exists = jedis.scriptExists(shas.toArray(String[]::new));
                for (int j = 0; j < shas.size(); j++) {
                    if (!exists.get(j)) {
                        missing.add("node " + (i + 1) + " never saw script " + shas.get(j));
                    }
                }
            }
        }
        return missing;
    }
}
