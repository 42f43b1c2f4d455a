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
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.BiFunction;
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
 * (the commands that produced them, one a line). scripts/bench runs it. With {@code --splice FILE} instead
 * of {@code --out}, only DIR's sections are written, into FILE in place of the sections of the same title
 * ({@link #splice}; {@code scripts/bench --renewal} does this for the renewal-at-scale sections). Hand-written analysis lives in
 * docs/benchmarks-notes.md, which the generated page links to and this class never touches.
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
            String redisVersion,
            String method,
            String mode,
            Map<String, Double> percentiles,
            Map<String, Double> seen,
            String file) {

        Row(
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
            this(
                    benchmarkClass,
                    backend,
                    params,
                    threads,
                    score,
                    error,
                    unit,
                    mix,
                    operations,
                    redisVersion,
                    "acquireRelease",
                    "avgt",
                    Map.of(),
                    Map.of(),
                    "");
        }

        /** The section this row belongs to: class, method, threads and every parameter but the contender's. */
        String section() {
            Map<String, String> others = new TreeMap<>(params);
            others.remove(contenderParam(params));
            return benchmarkClass + "." + method + " " + others + " " + threads;
        }

        /** The value at {@code percentile} (for example "50.0") of a sampled row, in µs. */
        double percentileMicros(String percentile) {
            Double value = percentiles.get(percentile);
            return value == null ? Double.NaN : micros(value);
        }

        double opsPerSecond() {
            return threads * 1_000_000.0 / micros(score);
        }

        private double micros(double value) {
            return switch (unit) {
                case "us/op" -> value;
                case "ms/op" -> value * 1000;
                case "ns/op" -> value / 1000;
                case "s/op" -> value * 1_000_000;
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
        for (int nodes : new int[] {1, 3, 5}) {
            WHAT.put(
                    "redisson-redlock-" + nodes,
                    "Redisson `RedissonRedLock` of one `RLock` per node (one client each), " + nodes
                            + (nodes == 1 ? " node" : " nodes, locked one after another")
                            + ": `tryLock(0, 30 s)`, `unlock()`");
        }
        WHAT.put("redisson-rlock", "Redisson `RLock`: `tryLock(0, 30 s)`, `unlock()`");
        WHAT.put("redisson-fenced", "Redisson `RFencedLock`: `tryLockAndGetToken(0, 30 s)`, `unlock()`");
        WHAT.put(
                "shedlock-redis",
                "ShedLock's Redis provider (Spring Data Redis over Jedis, defaults): `lock(...)`, `unlock()`"
                        + " (lockAtLeastFor 0): `SET NX PX`, then a plain `DEL` (unfenced, no owner check)");
        WHAT.put(
                "jetcd-floor",
                "**floor** of `etcd`: raw jetcd sending lock-etcd's two transactions as it sends them (queue a key"
                        + " on a session lease unless it or the attempt's tombstone exists, read the two newest keys;"
                        + " compare-and-delete)");
        WHAT.put("etcd", "lock-etcd");
        WHAT.put("jetcd-lock", "jetcd's `Lock` client: `lock(name, lease)`, `unlock(key)` (etcd's lock service)");
        WHAT.put(
                "floor",
                "**floor** of `lockstep`: the raw ZooKeeper client sending lock-zookeeper's requests (node and"
                        + " listing back to back, then the delete)");
        WHAT.put("lockstep", "lock-zookeeper");
        WHAT.put("curator-semaphore-mutex", "Curator `InterProcessSemaphoreMutex` (not bound to a thread)");
        WHAT.put("curator-mutex", "Curator `InterProcessMutex` (re-entrant, bound to its thread)");
        WHAT.put("floor-lease", "**floor** of `lease`: plain JDBC running lock-jdbc's lease-mode statements");
        WHAT.put("lease", "lock-jdbc, lease mode (a row with an expiry)");
        WHAT.put("floor-session", "**floor** of `session`: plain JDBC running lock-jdbc's session-mode transaction");
        WHAT.put("session", "lock-jdbc, session mode (a row lock held by an open transaction)");
        WHAT.put(
                "floor-session-sync",
                "session mode's transaction as cdfe1e5 left it (the notice queued by the lock statement, a bare COMMIT)");
        WHAT.put(
                "floor-lease-sync",
                "lease mode's statements with the release lock-jdbc sent before issue 27 (synchronous commit)");
        WHAT.put("shedlock-jdbc", "ShedLock's JDBC provider (`JdbcTemplateLockProvider`), lockAtLeastFor 0");
        WHAT.put("redis-renewed", "lock-redis, leases of `leaseSeconds` with `withAutoRenew()`, batched renewal");
        WHAT.put("redisson-watchdog", "Redisson `RLock.lock()` with its watchdog (`lockWatchdogTimeout` = lease)");
        WHAT.put(
                "etcd-renewed",
                "lock-etcd, leases of `leaseSeconds` with `withAutoRenew()`: keys on one shared session lease,"
                        + " renewals batched per read-only `Txn`");
        WHAT.put(
                "floor-redis-sentinel",
                "**floor** of `redis-sentinel`: raw `JedisSentineled` running lock-redis's two scripts on the primary");
        WHAT.put("redis-sentinel", "lock-redis via `redis-sentinel://` (1 primary, 2 replicas, 3 sentinels)");
        WHAT.put(
                "floor-redis-sentinel-wait1",
                "**floor** of `redis-sentinel-wait1`: raw `JedisSentineled`, acquire script + `WAIT 1` pipelined on"
                        + " one connection, then the release script");
        WHAT.put("redis-sentinel-wait1", "lock-redis via `redis-sentinel://` with `waitReplicas=1`");
        WHAT.put(
                "floor-redis-cluster",
                "**floor** of `redis-cluster`: raw `JedisCluster` running lock-redis's two scripts (3+3 cluster)");
        WHAT.put("redis-cluster", "lock-redis via `redis-cluster://` (3 primaries, 3 replicas)");
        WHAT.put(
                "floor-redis-cluster-wait1",
                "**floor** of `redis-cluster-wait1`: raw `JedisCluster`, acquire script + `WAIT 1` in one cluster"
                        + " pipeline (one connection to the key's primary), then the release script");
        WHAT.put("redis-cluster-wait1", "lock-redis via `redis-cluster://` with `waitReplicas=1`");
    }

    /** The floor of each Lockstep contender: raw Jedis doing its round trips. */
    static @Nullable String floorOf(String backend) {
        if (backend.equals("redis")) {
            return "floor-redis";
        }
        if (backend.startsWith("redlock-")) {
            return "floor-" + backend;
        }
        if (backend.startsWith("redisson-redlock-")) {
            return "floor-" + backend.substring("redisson-".length()); // the floor of the redlock-N it is compared with
        }
        if (backend.startsWith("redisson") || backend.equals("shedlock-redis")) {
            return "floor-redis"; // not their floor (other scripts), but the one Lockstep answers to
        }
        return switch (backend) {
            case "etcd", "jetcd-lock" -> "jetcd-floor";
            case "lockstep", "curator-mutex", "curator-semaphore-mutex" -> "floor";
            case "lease", "shedlock-jdbc" -> "floor-lease";
            case "session" -> "floor-session";
            default -> backend.startsWith("floor") || backend.equals("jedis-setnx") ? null : "floor-" + backend;
        };
    }

    private BenchReport() {}

    /** Entry point; see the class comment. */
    public static void main(String[] args) throws IOException {
        Map<String, String> options = new TreeMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        Path results = Path.of(require(options, "--results"));
        if (options.containsKey("--splice")) {
            Path doc = Path.of(options.get("--splice"));
            Files.writeString(
                    doc,
                    splice(
                            Files.readString(doc, StandardCharsets.UTF_8),
                            load(results),
                            readLines(results.resolve("commands.txt")),
                            options.getOrDefault("--commit", "unknown"),
                            runEnded(results)),
                    StandardCharsets.UTF_8);
            System.out.println("Spliced the sections of " + results + " into " + doc);
            return;
        }
        Path out = Path.of(require(options, "--out"));
        String markdown = render(
                load(results),
                readLines(results.resolve("commands.txt")),
                options.getOrDefault("--commit", "unknown"),
                runEnded(results),
                Machine.here());
        Files.writeString(out, markdown, StandardCharsets.UTF_8);
        System.out.println("Wrote " + out);
    }

    /**
     * When the run ended: the time its newest JSON result was written, so a page rendered again later from
     * the same results names the run's time, not the rendering's (now if there is none).
     */
    static ZonedDateTime runEnded(Path results) throws IOException {
        try (Stream<Path> files = Files.list(results)) {
            List<Path> json = files.filter(f -> f.toString().endsWith(".json")).toList();
            long newest = Long.MIN_VALUE;
            for (Path f : json) {
                newest = Math.max(newest, Files.getLastModifiedTime(f).toMillis());
            }
            return newest == Long.MIN_VALUE
                    ? ZonedDateTime.now(ZoneOffset.UTC)
                    : Instant.ofEpochMilli(newest).atZone(ZoneOffset.UTC);
        }
    }

    private static String require(Map<String, String> options, String name) {
        String value = options.get(name);
        if (value == null) {
            throw new IllegalArgumentException(
                    name + " is required: BenchReport --results DIR (--out FILE | --splice FILE) [--commit C]");
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
                rows.add(
                        row(element.getAsJsonObject(), mixes, file.getFileName().toString()));
            }
        }
        if (rows.isEmpty()) {
            throw new IllegalStateException("no JMH results in " + dir);
        }
        return rows;
    }

    /** The parameter naming the contender: {@code backend}, else {@code lock}, else {@code mode}. */
    static String contenderParam(Map<String, String> params) {
        for (String name : List.of("backend", "lock", "mode")) {
            if (params.containsKey(name)) {
                return name;
            }
        }
        return "backend";
    }

    private static Row row(JsonObject result, Map<String, CommandMix.MixRecord> mixes, String file) {
        String benchmark = result.get("benchmark").getAsString();
        int threads = result.get("threads").getAsInt();
        String mode = result.has("mode") ? result.get("mode").getAsString() : "avgt";
        Map<String, String> params = new LinkedHashMap<>();
        if (result.has("params")) {
            result.getAsJsonObject("params")
                    .entrySet()
                    .forEach(e -> params.put(e.getKey(), e.getValue().getAsString()));
        }
        CommandMix.MixRecord mix = mixes.get(key(benchmark, params, threads));
        if (mix == null && !mode.equals("sample")) {
            throw new IllegalStateException("no checked command mix for " + benchmark + " " + params + " at " + threads
                    + " threads: its trial did not prove what it measured; rerun scripts/bench");
        }
        JsonObject metric = result.getAsJsonObject("primaryMetric");
        double error = metric.get("scoreError").isJsonPrimitive()
                        && metric.get("scoreError").getAsJsonPrimitive().isNumber()
                ? metric.get("scoreError").getAsDouble()
                : Double.NaN; // "NaN" as a string with a single iteration
        Map<String, Double> percentiles = new LinkedHashMap<>();
        if (metric.has("scorePercentiles")) {
            metric.getAsJsonObject("scorePercentiles")
                    .entrySet()
                    .forEach(e -> percentiles.put(e.getKey(), e.getValue().getAsDouble()));
        }
        String path = benchmark.substring(0, benchmark.lastIndexOf('.'));
        Map<String, Double> seen =
                mix == null || mix.perServer() == null || mix.perServer().isEmpty()
                        ? Map.of()
                        : mix.perServer().get(0);
        return new Row(
                path.substring(path.lastIndexOf('.') + 1),
                params.getOrDefault(contenderParam(params), "?"),
                params,
                threads,
                metric.get("score").getAsDouble(),
                error,
                metric.get("scoreUnit").getAsString(),
                mix == null ? "not counted by this trial" : mix.mix(),
                mix == null ? 0 : mix.operations(),
                mix == null ? "" : mix.redisVersion(),
                benchmark.substring(benchmark.lastIndexOf('.') + 1),
                mode,
                percentiles,
                seen,
                file);
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
            versions.put("Spring Data Redis", version("org.springframework.data", "spring-data-redis"));
            versions.put("jetcd", version("io.etcd", "jetcd-core"));
            versions.put("Curator", version("org.apache.curator", "curator-recipes"));
            versions.put("ZooKeeper client", version("org.apache.zookeeper", "zookeeper"));
            versions.put("PostgreSQL JDBC", version("org.postgresql", "postgresql"));
            versions.put("HikariCP", version("com.zaxxer", "HikariCP"));
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

    /** A peer library's contender and the Lockstep contender it is compared with when both ran in one section. */
    record PeerPair(String peer, String ours) {}

    /** Every comparison of a peer with Lockstep, in the order the ratios and the headline list them. */
    static final List<PeerPair> PEERS = List.of(
            new PeerPair("redisson-rlock", "redis"),
            new PeerPair("redisson-fenced", "redis"),
            new PeerPair("shedlock-redis", "redis"),
            new PeerPair("redisson-redlock-1", "redlock-1"),
            new PeerPair("redisson-redlock-3", "redlock-3"),
            new PeerPair("redisson-redlock-5", "redlock-5"),
            new PeerPair("jetcd-lock", "etcd"),
            new PeerPair("curator-mutex", "lockstep"),
            new PeerPair("curator-semaphore-mutex", "lockstep"),
            new PeerPair("shedlock-jdbc", "lease"),
            new PeerPair("shedlock-jdbc", "session"));

    /** Whether {@code backend} is one of Lockstep's providers: not a floor, a reference or a peer library. */
    static boolean isLockstep(String backend) {
        return !backend.startsWith("floor")
                && !backend.startsWith("jetcd-floor")
                && !backend.equals("jedis-setnx")
                && PEERS.stream().noneMatch(p -> p.peer().equals(backend));
    }

    /** The whole document. */
    static String render(List<Row> rows, List<String> commands, String commit, ZonedDateTime when, Machine machine) {
        StringBuilder md = new StringBuilder();
        md.append("# Benchmarks\n\n");
        md.append("<!-- Generated by scripts/bench (io.lockstep.bench.BenchReport) from JMH's JSON: do not edit by"
                + " hand; rerun it. -->\n\n");
        md.append(
                """
                JMH benchmarks live in `lock-bench` (not deployed; JMH runs only from its jar). Every trial starts
                its own servers on loopback (redis-server, etcd, ZooKeeper in a child JVM, PostgreSQL), and ends by
                reading what its server was asked (Redis `INFO commandstats`, etcd's gRPC message counters from
                `/metrics`, ZooKeeper's `zk_packets_received`, PostgreSQL's `pg_stat_database` / table counters),
                dividing by the operations it counted, and failing the run if that is not what its name says. What
                each trial's server saw per operation is printed beside its figure; a row without it is refused.

                **Floors** are the raw client doing exactly the round trips a Lockstep provider does (the same Lua
                scripts, etcd transactions, ZooKeeper requests or SQL) and nothing else. A provider's throughput is
                given as a fraction of its floor's in the same run; peer libraries (Redisson, Curator, jetcd's `Lock`
                client, ShedLock) run in the same run against the same kind of server.

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
                + " `-rf json` output. Each section below names the command its figures come from.\n\n");
        md.append("## Machine and versions\n\n");
        String servers = rows.stream()
                .map(Row::redisVersion)
                .filter(v -> !v.isEmpty())
                .map(v -> Character.isDigit(v.charAt(0)) ? "redis-server " + v : v)
                // PostgreSQL callers' rows add ", fsync=on|off" to the version: each section names its fsync.
                .map(v -> v.replaceFirst(", fsync=\\w+$", ""))
                .distinct()
                .collect(Collectors.joining(", "));
        md.append("- Run of ")
                .append(when.format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT)))
                .append(", commit `")
                .append(commit)
                .append("`.\n");
        md.append("- ")
                .append(machine.cores())
                .append(" cores (")
                .append(machine.cpu())
                .append("): every server, the proxies and the client JVM share them. With ")
                .append(machine.cores())
                .append(" cores, a 5-node run has six busy processes on two cores: the servers' own work is"
                        + " serialized, so loopback figures for N nodes measure this machine's CPU as much as the"
                        + " fan-out.\n");
        md.append("- ")
                .append(machine.jdk())
                .append("; servers: ")
                .append(servers)
                .append(".\n");
        md.append("- ")
                .append(machine.versions().entrySet().stream()
                        .map(e -> e.getKey() + " " + e.getValue())
                        .collect(Collectors.joining(", ")))
                .append(".\n");
        md.append(
                """
                - Noise: one fork, short iterations, on a machine shared with other builds. The ± is JMH's 99.9%
                  confidence interval over the measured iterations of this run; the same command run again moves
                  figures by 10–25%. Compare rows of one run only, and read ratios rather than absolute figures.

                """);
        Map<String, List<Row>> sections = sections(rows);
        renderHeadline(md, sections.values());
        renderSections(md, sections, rows, commands);
        renderRatios(md, sections.values());
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

                ## Analysis kept by hand

                What limits each provider against its floor, and earlier runs with their own commands, are written
                by hand in [benchmarks-notes.md](benchmarks-notes.md); no figure of this page is typed by hand.
                """);
        return md.toString();
    }

    private static Map<String, List<Row>> sections(List<Row> rows) {
        Map<String, List<Row>> sections = new LinkedHashMap<>();
        for (Row row : rows) {
            sections.computeIfAbsent(row.section(), k -> new ArrayList<>()).add(row);
        }
        return sections;
    }

    /** One {@code ## } section per benchmark, threads and parameters, in the order of the rows. */
    private static void renderSections(
            StringBuilder md, Map<String, List<Row>> sections, List<Row> rows, List<String> commands) {
        for (List<Row> section : sections.values()) {
            Row first = section.get(0);
            if (first.benchmarkClass().equals("RenewalAtScaleBenchmark")) {
                renderRenewal(md, section, rows, commandFor(first, commands));
            } else if (first.mode().equals("sample")) {
                renderSampled(md, section, commandFor(first, commands));
            } else {
                renderSection(md, section, commandFor(first, commands));
            }
        }
    }

    /**
     * {@code doc} with the sections of {@code rows} put in: each replaces the section of the same title,
     * or, if the page has none, goes before its ratios (or at its end). Each says under its title that it
     * comes from another run than the page ({@code commit}, {@code when}), since the page's ratios and
     * header are not rewritten. For sections that stand alone (renewal at scale), when regenerating the
     * whole page would take a quiet machine for half an hour.
     */
    static String splice(String doc, List<Row> rows, List<String> commands, String commit, ZonedDateTime when) {
        StringBuilder fresh = new StringBuilder();
        renderSections(fresh, sections(rows), rows, commands);
        String note = "Spliced into this page from a run of "
                + when.format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT)) + ", commit `"
                + commit + "` (`BenchReport --splice`), not the run of the rest of the page.\n\n";
        Map<String, String> blocks = blocks(doc);
        for (Map.Entry<String, String> section : blocks(fresh.toString()).entrySet()) {
            String title = section.getKey();
            String body = section.getValue();
            int heading = body.indexOf('\n') + 1;
            heading = body.indexOf('\n', heading) + 1; // past the blank line after the title
            String text = body.substring(0, heading) + note + body.substring(heading);
            if (blocks.containsKey(title)) {
                blocks.put(title, text);
            } else {
                Map<String, String> out = new LinkedHashMap<>();
                boolean placed = false;
                for (Map.Entry<String, String> e : blocks.entrySet()) {
                    if (!placed && e.getKey().equals("## Ratios in this run")) {
                        out.put(title, text);
                        placed = true;
                    }
                    out.put(e.getKey(), e.getValue());
                }
                if (!placed) {
                    out.put(title, text);
                }
                blocks = out;
            }
        }
        return String.join("", blocks.values());
    }

    /** {@code markdown} cut before each {@code ## } line, keyed by that line (the text before the first by ""). */
    private static Map<String, String> blocks(String markdown) {
        Map<String, String> out = new LinkedHashMap<>();
        String title = "";
        StringBuilder block = new StringBuilder();
        for (String line : markdown.split("(?<=\n)")) {
            if (line.startsWith("## ")) {
                if (!title.isEmpty() || block.length() > 0) {
                    out.put(title, block.toString());
                }
                title = line.strip();
                block = new StringBuilder();
            }
            block.append(line);
        }
        out.put(title, block.toString());
        return out;
    }

    /** The command (from commands.txt) that wrote {@code row}'s JSON file, or "scripts/bench". */
    static String commandFor(Row row, List<String> commands) {
        if (!row.file().isEmpty()) {
            for (String c : commands) {
                if (c.contains("/" + row.file()) || c.endsWith(" " + row.file())) {
                    return c;
                }
            }
        }
        return "scripts/bench";
    }

    private static String title(Row first) {
        String what =
                switch (first.benchmarkClass() + "." + first.method()) {
                    case "AcquireReleaseBenchmark.acquireRelease" -> "Redis: uncontended acquire + release on loopback";
                    case "NetworkLatencyBenchmark.acquireRelease" ->
                        "Redis: acquire + release with every node "
                                + first.params().getOrDefault("latencyMicros", "?") + " µs away each way";
                    case "EtcdBenchmark.acquireRelease" -> "etcd: uncontended acquire + release";
                    case "EtcdBenchmark.handoff" -> "etcd: handoff from a holder to a queued waiter";
                    case "ZooKeeperBenchmark.acquireRelease" ->
                        "ZooKeeper: uncontended acquire + release, "
                                + (first.params().getOrDefault("names", "same").equals("fresh")
                                        ? "a new lock name each time"
                                        : "the same lock name each time");
                    case "ZooKeeperBenchmark.handoff" -> "ZooKeeper: handoff from a holder to a queued waiter";
                    case "JdbcBenchmark.acquireRelease" -> "PostgreSQL: uncontended acquire + release";
                    case "JdbcBenchmark.handoff" -> "PostgreSQL: handoff from a holder to a waiter";
                    case "JdbcCallersBenchmark.acquireRelease" ->
                        "PostgreSQL (fsync=" + first.params().getOrDefault("fsync", "?")
                                + "): uncontended acquire + release, each caller on a lock of its own";
                    case "HandoffBenchmark.handoff" ->
                        serverName(first.params().getOrDefault("server", "redis"))
                                + ": contended handoff, every thread on one lock name";
                    default -> first.benchmarkClass() + "." + first.method();
                };
        return what + ", " + first.threads() + (first.threads() == 1 ? " thread" : " threads");
    }

    private static String serverName(String server) {
        return switch (server) {
            case "redis" -> "Redis";
            case "zookeeper" -> "ZooKeeper";
            case "postgresql" -> "PostgreSQL";
            default -> server;
        };
    }

    private static void heading(StringBuilder md, Row first, String command) {
        md.append("## ").append(title(first)).append("\n\n");
        md.append("Command: `").append(command).append("`\n\n");
    }

    private static void renderSection(StringBuilder md, List<Row> section, String command) {
        Row first = section.get(0);
        heading(md, first, command);
        md.append("`")
                .append(first.benchmarkClass())
                .append("`, ")
                .append(first.threads() == 1 ? "one thread" : first.threads() + " threads, each on a lock of its own")
                .append(": one acquire of a free lock and its release, average time per operation.");
        if (first.benchmarkClass().equals("NetworkLatencyBenchmark")) {
            md.append(" Every node is reached through lock-tck's in-JVM `TcpProxy`, which delays each direction;"
                    + " the proxy's own timer makes a hop cost more than the delay set, the same for every row.");
        }
        md.append("\n\n");
        md.append("| contender | what it is | µs/op | ops/s | throughput vs floor | what the server saw per"
                + " operation |\n");
        md.append("|---|---|---|---|---|---|\n");
        Map<String, Row> byBackend = new LinkedHashMap<>();
        section.forEach(r -> byBackend.put(r.backend(), r));
        for (Row row : section) {
            String floor = floorOf(row.backend());
            Row floorRow = floor == null ? null : byBackend.get(floor);
            tableRow(
                    md,
                    row,
                    micros(row),
                    String.format(Locale.ROOT, "%,.0f", row.opsPerSecond()),
                    floorRow == null || floorRow == row ? "" : throughputRatio(row, floorRow) + " of `" + floor + "`",
                    row.mix());
        }
        md.append('\n');
    }

    /** A {@code SampleTime} section: percentiles of each sampled operation (a handoff). */
    private static void renderSampled(StringBuilder md, List<Row> section, String command) {
        Row first = section.get(0);
        heading(md, first, command);
        md.append("`")
                .append(first.benchmarkClass())
                .append(".")
                .append(first.method())
                .append(
                        first.benchmarkClass().equals("HandoffBenchmark")
                                ? "`: every thread of one client loops: wait for the lock, hold it "
                                        + first.params().getOrDefault("holdMicros", "?")
                                        + " µs (not timed), release it and wait until another thread holds it (timed,"
                                        + " JMH `SampleTime`; a wait is cut at 100 ms, the bound for the last holder of"
                                        + " an iteration). The server's calls per grant are counted at the server.\n\n"
                                : first.benchmarkClass().equals("JdbcCallersBenchmark")
                                        ? "`: every operation is timed (JMH `SampleTime`); one acquire of a free lock and"
                                                + " its release, each thread a caller on a lock name of its own, lock-jdbc"
                                                + " and ShedLock over pools of 10 (session mode 16), each floor over a pool"
                                                + " of its mode's size. The server's counters are per operation.\n\n"
                                        : "`: every operation is timed (JMH `SampleTime`); the time from the holder's"
                                                + " release until the waiter, already queued on another client, holds"
                                                + " the lock.\n\n");
        md.append("| contender | what it is | p50 µs | p99 µs | p99.9 µs | mean µs | rounds | what the server saw"
                + " per round |\n");
        md.append("|---|---|---|---|---|---|---|---|\n");
        for (Row row : section) {
            tableRow(
                    md,
                    row,
                    oneDecimal(row.percentileMicros("50.0")),
                    oneDecimal(row.percentileMicros("99.0")),
                    oneDecimal(row.percentileMicros("99.9")),
                    micros(row),
                    row.operations() == 0 ? "" : String.format(Locale.ROOT, "%,d", row.operations()),
                    row.mix());
        }
        md.append('\n');
    }

    /** The servers a renewal-at-scale section ran on, from its contenders: "Redis", "etcd" or "Redis and etcd". */
    static String renewalServers(List<Row> section) {
        return section.stream()
                .map(r -> r.backend().startsWith("etcd") ? "etcd" : "Redis")
                .distinct()
                .sorted(java.util.Comparator.comparing(server -> server.equals("Redis") ? 0 : 1))
                .collect(Collectors.joining(" and "));
    }

    /**
     * Redisson's watchdog, for a renewal section it did not run in (100,000 leases): its row with the most
     * leases from the same run, lease and hold, or none.
     */
    static Optional<Row> redissonReference(List<Row> section, List<Row> rows) {
        Row first = section.get(0);
        if (section.stream().anyMatch(r -> r.backend().equals("redisson-watchdog"))) {
            return Optional.empty();
        }
        return rows.stream()
                .filter(r -> r.benchmarkClass().equals("RenewalAtScaleBenchmark"))
                .filter(r -> r.backend().equals("redisson-watchdog"))
                .filter(r -> Objects.equals(
                        r.params().get("leaseSeconds"), first.params().get("leaseSeconds")))
                .filter(r -> Objects.equals(
                        r.params().get("holdSeconds"), first.params().get("holdSeconds")))
                .max(java.util.Comparator.comparingInt(
                        r -> Integer.parseInt(r.params().getOrDefault("leases", "0"))));
    }

    /** The renewal-at-scale harness: what the server and the client JVM showed while the leases were held. */
    private static void renderRenewal(StringBuilder md, List<Row> section, List<Row> rows, String command) {
        Row first = section.get(0);
        md.append("## ")
                .append(renewalServers(section))
                .append(": ")
                .append(whole(Double.parseDouble(first.params().getOrDefault("leases", "NaN"))))
                .append(" auto-renewed leases held for ")
                .append(first.params().getOrDefault("holdSeconds", "?"))
                .append(" s (lease ")
                .append(first.params().getOrDefault("leaseSeconds", "?"))
                .append(" s)\n\n");
        md.append("Command: `").append(command).append("`\n\n");
        md.append(
                """
                `RenewalAtScaleBenchmark` (JMH `SingleShotTime`, one shot per trial, its own JVM with `-Xmx2g`): the
                leases are taken by 8 threads, then held while the library renews them on its own; over the hold
                (after one unmeasured lease time) the harness reads what the server was asked (Redis
                `INFO commandstats`: a renewal round trip is a script call, and the commands count those the scripts
                ran; etcd's `grpc_server_msg_received_total`: a renewal round trip is a `Txn` or a `LeaseKeepAlive`
                message), the client process's CPU time (`OperatingSystemMXBean.getProcessCpuTime`, less the
                harness's sampling thread), the heap used after a full GC, and the JVM's live threads. Heap per
                lease is that heap less the heap after a full GC with the client open and no lease taken, divided
                by the leases (the handles the harness keeps, as a caller would, are in it). The trial fails if a
                lease was lost or the server saw no renewal.

                """);
        Optional<Row> reference = redissonReference(section, rows);
        reference.ifPresent(r -> md.append("The `redisson-watchdog` row is its largest run of this page (")
                .append(whole(Double.parseDouble(r.params().getOrDefault("leases", "NaN"))))
                .append(" leases, the same lease and hold), for reference: it was not run at this count.\n\n"));
        md.append("| contender | what it is | leases | renewal round trips/s at the server | all requests/s at the"
                + " server | renewals/s | heap per lease (bytes) | client CPU ms/s | heap MB | live threads (peak) |"
                + " renewal threads (peak) |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        List<Row> shown = new ArrayList<>(section);
        reference.ifPresent(shown::add);
        for (Row row : shown) {
            Map<String, Double> m = row.seen();
            tableRow(
                    md,
                    row,
                    whole(Double.parseDouble(row.params().getOrDefault("leases", "NaN"))),
                    oneDecimal(m.getOrDefault("renewal round trips/s", m.getOrDefault("script calls/s", Double.NaN))),
                    whole(m.getOrDefault("requests/s", m.getOrDefault("commands/s", Double.NaN))),
                    oneDecimal(m.getOrDefault("renewals/s", Double.NaN)),
                    whole(m.getOrDefault("heap per lease B", Double.NaN)),
                    oneDecimal(m.getOrDefault("client CPU ms/s", Double.NaN)),
                    oneDecimal(m.getOrDefault("heap MB", Double.NaN)),
                    whole(m.getOrDefault("threads peak", Double.NaN)),
                    whole(m.getOrDefault("renewal threads peak", Double.NaN)));
        }
        md.append('\n');
    }

    /** One table line: the contender, what it is, then {@code cells}. */
    private static void tableRow(StringBuilder md, Row row, String... cells) {
        md.append("| `").append(row.backend()).append("` | ").append(WHAT.getOrDefault(row.backend(), ""));
        for (String cell : cells) {
            md.append(" | ").append(cell);
        }
        md.append(" |\n");
    }

    private static String whole(double value) {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.ROOT, "%,.0f", value);
    }

    private static String oneDecimal(double value) {
        return Double.isNaN(value) ? "" : String.format(Locale.ROOT, "%,.1f", value);
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

    /** Ratios between rows of one section, where both rows ran: Redlock's fan-out, and every peer against Lockstep. */
    private static void renderRatios(StringBuilder md, java.util.Collection<List<Row>> sections) {
        List<String> lines = new ArrayList<>();
        for (List<Row> section : sections) {
            Row first = section.get(0);
            if (first.benchmarkClass().equals("RenewalAtScaleBenchmark")) {
                continue;
            }
            Map<String, Row> by = new LinkedHashMap<>();
            section.forEach(r -> by.put(r.backend(), r));
            String where = title(first);
            if (first.mode().equals("sample")) {
                peerLines(
                        by,
                        lines,
                        (peer, ours) -> String.format(
                                Locale.ROOT,
                                "%s against Lockstep: handoff p50 of `%s` / `%s` = **%.2f×**, p99 %.2f× (%s)",
                                peer.backend(),
                                peer.backend(),
                                ours.backend(),
                                peer.percentileMicros("50.0") / ours.percentileMicros("50.0"),
                                peer.percentileMicros("99.0") / ours.percentileMicros("99.0"),
                                where));
                continue;
            }
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
            peerLines(
                    by,
                    lines,
                    (peer, ours) -> String.format(
                            Locale.ROOT,
                            "Lockstep's throughput against %s: `%s` / `%s` = **%s** (%s)",
                            peer.backend(),
                            ours.backend(),
                            peer.backend(),
                            throughputRatio(ours, peer),
                            where));
        }
        if (lines.isEmpty()) {
            return;
        }
        md.append("## Ratios in this run\n\n");
        md.append("Throughput ratios are time ratios inverted; the range in brackets comes from both rows' error"
                + " bars.\n\n");
        lines.forEach(l -> md.append("- ").append(l).append('\n'));
        md.append('\n');
    }

    /**
     * The page's first table: every Lockstep contender of this run against its floor and its peers, as time
     * ratios, one line per section. PostgreSQL counts with {@code fsync} on, as users run it: sections with it
     * off are left to their own labelled tables, as are renewal at scale (its own measures) and rows without a
     * floor or a peer beside them.
     */
    private static void renderHeadline(StringBuilder md, java.util.Collection<List<Row>> sections) {
        List<String> lines = new ArrayList<>();
        for (List<Row> section : sections) {
            Row first = section.get(0);
            if (first.benchmarkClass().equals("RenewalAtScaleBenchmark")
                    || "off".equals(first.params().get("fsync"))) {
                continue;
            }
            Map<String, Row> by = new LinkedHashMap<>();
            section.forEach(r -> by.put(r.backend(), r));
            for (Row ours : section) {
                if (!isLockstep(ours.backend())) {
                    continue;
                }
                String floorName = floorOf(ours.backend());
                Row floor = floorName == null ? null : by.get(floorName);
                String peers = PEERS.stream()
                        .filter(p -> p.ours().equals(ours.backend()) && by.containsKey(p.peer()))
                        .map(p -> "`" + p.peer() + "` " + timeRatio(ours, by.get(p.peer())))
                        .collect(Collectors.joining("; "));
                if (floor == null && peers.isEmpty()) {
                    continue;
                }
                lines.add("| " + title(first) + " | `" + ours.backend() + "` | "
                        + (floor == null ? "" : timeRatio(ours, floor)) + " | " + peers + " |");
            }
        }
        if (lines.isEmpty()) {
            return;
        }
        md.append("## Headline: Lockstep's time against its floor and its peers\n\n");
        md.append("Lockstep's time ÷ the other's, in this run (below 1: Lockstep is faster). Uncontended rows compare"
                + " mean times per operation; sampled rows (handoffs, PostgreSQL callers) compare the p50 and the p99."
                + " PostgreSQL is counted with `fsync` on, as users run it; its `fsync=off` figures are in their own"
                + " labelled sections below. Each line's section below has the figures, the error bars and what the"
                + " server saw.\n\n");
        md.append("| section | Lockstep | against its floor | against its peers |\n|---|---|---|---|\n");
        lines.forEach(l -> md.append(l).append('\n'));
        md.append('\n');
    }

    /** Time of {@code ours} ÷ time of {@code other}: of the means, or of the p50 and p99 for sampled rows. */
    static String timeRatio(Row ours, Row other) {
        if (ours.mode().equals("sample")) {
            return String.format(
                    Locale.ROOT,
                    "p50 %.2f×, p99 %.2f×",
                    ours.percentileMicros("50.0") / other.percentileMicros("50.0"),
                    ours.percentileMicros("99.0") / other.percentileMicros("99.0"));
        }
        return String.format(Locale.ROOT, "%.2f×", ours.microsPerOp() / other.microsPerOp());
    }

    /** One line per pair of {@link #PEERS} that ran in a section, both of its contenders. */
    private static void peerLines(Map<String, Row> by, List<String> lines, BiFunction<Row, Row, String> line) {
        for (PeerPair pair : PEERS) {
            Row p = by.get(pair.peer());
            Row o = by.get(pair.ours());
            if (p != null && o != null) {
                lines.add(line.apply(p, o));
            }
        }
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
