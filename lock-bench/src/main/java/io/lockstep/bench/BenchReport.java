package io.lockstep.bench;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Writes docs/benchmarks.md from one run's JMH JSON files and the command mixes the trials
 * recorded ({@link CommandMix#record}), so that no figure in it is typed by hand. Refuses to write
 * anything if a result has no checked command mix (its trial did not prove what it measured).
 *
 * <p>{@code java -cp benchmarks.jar io.lockstep.bench.BenchReport --results DIR --out FILE [--commit C]}:
 * DIR holds {@code *.json} (JMH's {@code -rf json}), {@code mix.jsonl} and {@code commands.txt}
 * (the commands that produced them, one a line). scripts/bench runs it.
 */
public final class BenchReport {

    /** One JMH result with its checked command mix. */
    record Row(
            String benchmarkClass,
            String backend,
            Map<String, String> params,
            int threads,
            double score,
            double error,
            String unit,
            String mix,
            long operations,
            String redisVersion) {

        double opsPerSecond() {
            return threads * 1_000_000.0 / micros(score);
        }

        private double micros(double value) {
            return switch (unit) {
                case "us/op" -> value;
                case "ms/op" -> value * 1000;
                case "ns/op" -> value / 1000;
                default -> throw new IllegalStateException("unit " + unit + " is not a time per operation");
            };
        }

        double microsPerOp() {
            return micros(score);
        }

        double microsError() {
            return micros(error);
        }
    }

    /** What each contender is, for the tables. */
    static final Map<String, String> WHAT = new LinkedHashMap<>();

    static {
        WHAT.put(
                "jedis-setnx",
                "raw Jedis, the usual hand-written lock: `SET NX PX`, compare-and-delete by `EVALSHA`"
                        + " (unfenced, no release notice; a reference, not a floor)");
        WHAT.put("floor-redis", "**floor** of `redis`: raw Jedis running lock-redis's acquire and release scripts");
        WHAT.put("redis", "lock-redis, one node");
        WHAT.put("floor-redlock-1", "**floor** of `redlock-1`: raw Jedis running lock-redlock's two scripts");
        WHAT.put("redlock-1", "lock-redlock, 1 node");
        WHAT.put(
                "floor-redlock-3",
                "**floor** of `redlock-3`: raw Jedis, lock-redlock's two scripts on 3 nodes, "
                        + "each written to every node, then every reply read, from one thread");
        WHAT.put("redlock-3", "lock-redlock, 3 nodes");
        WHAT.put("floor-redlock-5", "**floor** of `redlock-5`: the same on 5 nodes");
        WHAT.put("redlock-5", "lock-redlock, 5 nodes");
        WHAT.put("redisson-rlock", "Redisson `RLock`: `tryLock(0, 30 s)`, `unlock()`");
        WHAT.put("redisson-fenced", "Redisson `RFencedLock`: `tryLockAndGetToken(0, 30 s)`, `unlock()`");
        WHAT.put("shedlock-jedis", "ShedLock's Jedis provider: `lock(...)`, `unlock()` (lockAtLeastFor 0)");
    }

    /** The floor of each Lockstep contender: raw Jedis doing its round trips. */
    static @Nullable String floorOf(String backend) {
        if (backend.equals("redis")) {
            return "floor-redis";
        }
        if (backend.startsWith("redlock-")) {
            return "floor-" + backend;
        }
        if (backend.startsWith("redisson") || backend.startsWith("shedlock")) {
            return "floor-redis"; // not their floor (other scripts), but the one Lockstep answers to
        }
        return null;
    }

    private BenchReport() {}

    /** Entry point; see the class comment. */
    public static void main(String[] args) throws IOException {
        Map<String, String> options = new TreeMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        Path results = Path.of(require(options, "--results"));
        Path out = Path.of(require(options, "--out"));
        String markdown = render(
                load(results),
                readLines(results.resolve("commands.txt")),
                options.getOrDefault("--commit", "unknown"),
                ZonedDateTime.now(ZoneOffset.UTC),
                Machine.here());
        Files.writeString(out, markdown + keptSections(out), StandardCharsets.UTF_8);
        System.out.println("Wrote " + out);
    }

    /** Marks where the sections of other benchmarks (etcd, ZooKeeper) start; they are kept as they are. */
    static final String KEPT_MARKER = "<!-- Sections below come from other benchmarks; scripts/bench keeps them. -->";

    /** The part of the existing page from {@link #KEPT_MARKER} on, or nothing. */
    private static String keptSections(Path out) throws IOException {
        if (!Files.exists(out)) {
            return "";
        }
        String existing = Files.readString(out, StandardCharsets.UTF_8);
        int at = existing.indexOf(KEPT_MARKER);
        return at < 0 ? "" : "\n" + existing.substring(at);
    }

    private static String require(Map<String, String> options, String name) {
        String value = options.get(name);
        if (value == null) {
            throw new IllegalArgumentException(
                    name + " is required: BenchReport --results DIR --out FILE [--commit C]");
        }
        return value;
    }

    private static List<String> readLines(Path file) throws IOException {
        return Files.exists(file)
                ? Files.readAllLines(file, StandardCharsets.UTF_8).stream()
                        .filter(l -> !l.isBlank())
                        .toList()
                : List.of();
    }

    /** Every JMH result in {@code dir}'s JSON files, joined to its recorded command mix. */
    static List<Row> load(Path dir) throws IOException {
        Map<String, CommandMix.MixRecord> mixes = new LinkedHashMap<>();
        Gson gson = new Gson();
        for (String line : readLines(dir.resolve("mix.jsonl"))) {
            CommandMix.MixRecord record = gson.fromJson(line, CommandMix.MixRecord.class);
            mixes.put(key(record.benchmark(), record.params(), record.threads()), record);
        }
        List<Path> files;
        try (Stream<Path> list = Files.list(dir)) {
            files = list.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
        List<Row> rows = new ArrayList<>();
        for (Path file : files) {
            JsonArray results = JsonParser.parseString(Files.readString(file, StandardCharsets.UTF_8))
                    .getAsJsonArray();
            for (JsonElement element : results) {
                rows.add(row(element.getAsJsonObject(), mixes));
            }
        }
        if (rows.isEmpty()) {
            throw new IllegalStateException("no JMH results in " + dir);
        }
        return rows;
    }

    private static Row row(JsonObject result, Map<String, CommandMix.MixRecord> mixes) {
        String benchmark = result.get("benchmark").getAsString();
        int threads = result.get("threads").getAsInt();
        Map<String, String> params = new LinkedHashMap<>();
        if (result.has("params")) {
            result.getAsJsonObject("params")
                    .entrySet()
                    .forEach(e -> params.put(e.getKey(), e.getValue().getAsString()));
        }
        CommandMix.MixRecord mix = mixes.get(key(benchmark, params, threads));
        if (mix == null) {
            throw new IllegalStateException("no checked command mix for " + benchmark + " " + params + " at " + threads
                    + " threads: its trial did not prove what it measured; rerun scripts/bench");
        }
        JsonObject metric = result.getAsJsonObject("primaryMetric");
        double error = metric.get("scoreError").isJsonPrimitive()
                        && metric.get("scoreError").getAsJsonPrimitive().isNumber()
                ? metric.get("scoreError").getAsDouble()
                : Double.NaN; // "NaN" as a string with a single iteration
        String method = benchmark.substring(0, benchmark.lastIndexOf('.'));
        return new Row(
                method.substring(method.lastIndexOf('.') + 1),
                params.getOrDefault("backend", "?"),
                params,
                threads,
                metric.get("score").getAsDouble(),
                error,
                metric.get("scoreUnit").getAsString(),
                mix.mix(),
                mix.operations(),
                mix.redisVersion());
    }

    private static String key(String benchmark, Map<String, String> params, int threads) {
        return benchmark + " " + new TreeMap<>(params) + " " + threads;
    }

    /** What the report says about the machine and the libraries. */
    record Machine(int cores, String cpu, String jdk, Map<String, String> versions) {

        static Machine here() {
            String cpu = "unknown CPU";
            try {
                cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
                        .filter(l -> l.startsWith("model name"))
                        .map(l -> l.substring(l.indexOf(':') + 1).strip())
                        .findFirst()
                        .orElse(cpu);
            } catch (IOException | UncheckedIOException e) {
                // not Linux: leave it unknown
            }
            Map<String, String> versions = new LinkedHashMap<>();
            versions.put("Lockstep", version("io.lockstep", "lock-redis"));
            versions.put("Jedis", version("redis.clients", "jedis"));
            versions.put("JMH", version("org.openjdk.jmh", "jmh-core"));
            versions.put("Redisson", version("org.redisson", "redisson"));
            versions.put("ShedLock", version("net.javacrumbs.shedlock", "shedlock-core"));
            versions.values().removeIf(v -> v.isEmpty());
            return new Machine(
                    Runtime.getRuntime().availableProcessors(),
                    cpu,
                    System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
                    versions);
        }

        private static String version(String group, String artifact) {
            String resource = "META-INF/maven/" + group + "/" + artifact + "/pom.properties";
            try (InputStream in = BenchReport.class.getClassLoader().getResourceAsStream(resource)) {
                if (in == null) {
                    return "";
                }
                Properties properties = new Properties();
                properties.load(in);
                return properties.getProperty("version", "");
            } catch (IOException e) {
                return "";
            }
        }
    }

    /** The whole document. */
    static String render(List<Row> rows, List<String> commands, String commit, ZonedDateTime when, Machine machine) {
        StringBuilder md = new StringBuilder();
        md.append("# Benchmarks\n\n");
        md.append("<!-- Generated by scripts/bench (io.lockstep.bench.BenchReport) from JMH's JSON: do not edit by"
                + " hand; rerun it. -->\n\n");
        md.append(
                """
                JMH benchmarks live in `lock-bench` (not deployed; JMH runs only from its jar). Each trial starts its
                own `redis-server` processes on loopback, and ends by reading `INFO commandstats` from every server it
                used, dividing by the operations it counted, and failing the run if the commands per operation are
                not the ones its name says (Redis counts the commands a script calls, so the mix is a fingerprint of
                the scripts run); a Lockstep trial also fails unless every server ran its floor's exact scripts
                (`SCRIPT EXISTS`). The mix each trial was seen to run is printed beside its figure.

                **Floors** are raw Jedis doing exactly the round trips a Lockstep provider does: the same Lua scripts
                (copied byte for byte), on the same number of nodes, fanned out the same way, and nothing else.
                A provider's throughput is given as a fraction of its floor's in the same run.

                """);
        md.append("## Reproduce\n\n```sh\n");
        if (commands.isEmpty()) {
            md.append("scripts/bench\n");
        } else {
            commands.forEach(c -> md.append(c).append('\n'));
        }
        md.append("```\n\n");
        md.append("`scripts/bench` builds `lock-bench/target/benchmarks.jar`, runs the JMH commands above (under `flock"
                + " -o /tmp/lockstep-cpu.lock`, so no build shares the cores), and regenerates this file from their"
                + " `-rf json` output. One run takes about 5 minutes.\n\n");
        md.append("## Machine and versions\n\n");
        String redis = rows.stream().map(Row::redisVersion).distinct().collect(Collectors.joining(", "));
        md.append("- Run of ")
                .append(when.format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT)))
                .append(", commit `")
                .append(commit)
                .append("`.\n");
        md.append("- ")
                .append(machine.cores())
                .append(" cores (")
                .append(machine.cpu())
                .append("): every redis-server, the proxies and the client JVM share them. With ")
                .append(machine.cores())
                .append(" cores, a 5-node run has six busy processes on two cores: the servers' own work is"
                        + " serialized, so loopback figures for N nodes measure this machine's CPU as much as the"
                        + " fan-out.\n");
        md.append("- ")
                .append(machine.jdk())
                .append("; redis-server ")
                .append(redis)
                .append(".\n");
        md.append("- ")
                .append(machine.versions().entrySet().stream()
                        .map(e -> e.getKey() + " " + e.getValue())
                        .collect(Collectors.joining(", ")))
                .append(".\n");
        md.append(
                """
                - Noise: one fork, short iterations, on a shared 2-core machine. The ± is JMH's 99.9% confidence
                  interval over the measured iterations of this run; the same command run again moves figures by
                  10–25%. Compare rows of one run only, and read ratios rather than absolute figures.

                """);
        Map<String, List<Row>> sections = new LinkedHashMap<>();
        for (Row row : rows) {
            sections.computeIfAbsent(row.benchmarkClass() + " " + row.threads(), k -> new ArrayList<>())
                    .add(row);
        }
        for (List<Row> section : sections.values()) {
            renderSection(md, section);
        }
        renderRatios(md, rows);
        md.append(
                """
                ## How Redlock's fan-out is built

                The calling thread writes the request on every node's pooled connection first and then reads the
                replies, so all nodes work at once without handing work to other threads; only nodes without an idle
                connection (connecting may block) or that failed lately go through worker threads, and once a quorum
                has granted they are not waited for. The `floor-redlock-N` rows do the same writes and reads with raw
                Jedis and nothing else, so `redlock-N` against `floor-redlock-N` is the cost of lock-redlock's own
                logic, and `floor-redlock-N` against `floor-redlock-1` is what N nodes cost on this machine.

                ## Corrections

                Earlier versions of this page said "redlock-5 / jedis-floor-5 = 0.84" and "raw Jedis on five nodes
                costs 4.7× its one-node time". Both were false: the benchmark's `jedis-floor-3` and `jedis-floor-5`
                never filled their list of raw connections and ran lock-redlock instead (issue 14). The floors were
                rewritten, renamed `floor-redlock-N`, and every trial now proves from the servers' command counters
                what it ran; the figures above replace all earlier ones.
                """);
        return md.toString();
    }

    private static void renderSection(StringBuilder md, List<Row> section) {
        Row first = section.get(0);
        String title =
                switch (first.benchmarkClass()) {
                    case "AcquireReleaseBenchmark" -> "Uncontended acquire + release on loopback";
                    case "NetworkLatencyBenchmark" ->
                        "Acquire + release with every node " + first.params().getOrDefault("latencyMicros", "?")
                                + " µs away each way";
                    default -> first.benchmarkClass();
                };
        md.append("## ")
                .append(title)
                .append(", ")
                .append(first.threads())
                .append(first.threads() == 1 ? " thread" : " threads")
                .append("\n\n");
        md.append("`")
                .append(first.benchmarkClass())
                .append("`, ")
                .append(first.threads() == 1 ? "one thread" : first.threads() + " threads, each on a lock of its own")
                .append(": one `tryAcquire` of a free lock and its `release`, average time per operation.");
        if (first.benchmarkClass().equals("NetworkLatencyBenchmark")) {
            md.append(" Every node is reached through lock-tck's in-JVM `TcpProxy`, which delays each direction;"
                    + " the proxy's own timer makes a hop cost more than the delay set, the same for every row.");
        }
        md.append("\n\n");
        md.append("| contender | what it is | µs/op | ops/s | throughput vs floor | commands per operation, seen by"
                + " the servers |\n");
        md.append("|---|---|---|---|---|---|\n");
        Map<String, Row> byBackend = new LinkedHashMap<>();
        section.forEach(r -> byBackend.put(r.backend(), r));
        for (Row row : section) {
            String floor = floorOf(row.backend());
            Row floorRow = floor == null ? null : byBackend.get(floor);
            md.append("| `")
                    .append(row.backend())
                    .append("` | ")
                    .append(WHAT.getOrDefault(row.backend(), ""))
                    .append(" | ")
                    .append(micros(row))
                    .append(" | ")
                    .append(String.format(Locale.ROOT, "%,.0f", row.opsPerSecond()))
                    .append(" | ")
                    .append(floorRow == null ? "" : throughputRatio(row, floorRow) + " of `" + floor + "`")
                    .append(" | ")
                    .append(row.mix())
                    .append(" |\n");
        }
        md.append('\n');
    }

    static String micros(Row row) {
        String score = String.format(Locale.ROOT, "%.1f", row.microsPerOp());
        return Double.isNaN(row.microsError())
                ? score
                : score + " ± " + String.format(Locale.ROOT, "%.1f", row.microsError());
    }

    /** {@code floor time / row time} as "0.93× (0.80–1.08)", the range from both error bars. */
    static String throughputRatio(Row row, Row floor) {
        double ratio = floor.microsPerOp() / row.microsPerOp();
        String out = String.format(Locale.ROOT, "%.2f×", ratio);
        if (Double.isNaN(row.microsError()) || Double.isNaN(floor.microsError())) {
            return out;
        }
        double low = (floor.microsPerOp() - floor.microsError()) / (row.microsPerOp() + row.microsError());
        double high = row.microsPerOp() > row.microsError()
                ? (floor.microsPerOp() + floor.microsError()) / (row.microsPerOp() - row.microsError())
                : Double.POSITIVE_INFINITY;
        return out + String.format(Locale.ROOT, " (%.2f–%.2f)", Math.max(0, low), high);
    }

    /** Ratios of times between rows of one section, where both rows ran. */
    private static void renderRatios(StringBuilder md, List<Row> rows) {
        List<String> lines = new ArrayList<>();
        Map<String, List<Row>> sections = new LinkedHashMap<>();
        for (Row row : rows) {
            sections.computeIfAbsent(row.benchmarkClass() + " " + row.threads(), k -> new ArrayList<>())
                    .add(row);
        }
        for (List<Row> section : sections.values()) {
            Map<String, Row> by = new LinkedHashMap<>();
            section.forEach(r -> by.put(r.backend(), r));
            String where = section.get(0).benchmarkClass() + ", "
                    + section.get(0).threads() + " thread" + (section.get(0).threads() == 1 ? "" : "s");
            timeRatio(by, "redlock-5", "redis", "Redlock over 5 nodes against one Redis (target: within 1.3×)", where)
                    .ifPresent(lines::add);
            timeRatio(by, "redlock-5", "redlock-1", "Redlock over 5 nodes against over 1", where)
                    .ifPresent(lines::add);
            timeRatio(by, "floor-redlock-5", "floor-redlock-1", "the raw floor on 5 nodes against on 1", where)
                    .ifPresent(lines::add);
            timeRatio(by, "floor-redlock-3", "floor-redlock-1", "the raw floor on 3 nodes against on 1", where)
                    .ifPresent(lines::add);
            timeRatio(by, "floor-redlock-5", "floor-redis", "the 5-node floor against lock-redis's floor", where)
                    .ifPresent(lines::add);
            timeRatio(
                            by,
                            "floor-redis",
                            "jedis-setnx",
                            "lock-redis's floor (fenced, with a release notice) against"
                                    + " the unfenced hand-written lock",
                            where)
                    .ifPresent(lines::add);
            for (String peer : List.of("redisson-rlock", "redisson-fenced", "shedlock-jedis")) {
                timeRatio(by, peer, "redis", peer + " against lock-redis", where)
                        .ifPresent(lines::add);
            }
        }
        if (lines.isEmpty()) {
            return;
        }
        md.append("## Ratios of time per operation in this run\n\n");
        lines.forEach(l -> md.append("- ").append(l).append('\n'));
        md.append('\n');
    }

    private static Optional<String> timeRatio(Map<String, Row> by, String a, String b, String what, String where) {
        Row x = by.get(a);
        Row y = by.get(b);
        if (x == null || y == null) {
            return Optional.empty();
        }
        return Optional.of(String.format(
                Locale.ROOT, "%s: `%s` / `%s` = **%.2f×** (%s)", what, a, b, x.microsPerOp() / y.microsPerOp(), where));
    }
}
