package io.lockstep.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchReportTest {

    private static final String BENCH = "io.lockstep.bench.AcquireReleaseBenchmark.acquireRelease";

    @TempDir
    Path dir;

    private static String result(String backend, double score, double error) {
        return """
                {"benchmark": "%s", "mode": "avgt", "threads": 1, "forks": 1,
                 "params": {"backend": "%s"},
                 "primaryMetric": {"score": %s, "scoreError": %s, "scoreUnit": "us/op"}}"""
                .formatted(BENCH, backend, score, error);
    }

    private static String mix(String backend, String line) {
        return "{\"benchmark\":\"" + BENCH + "\",\"params\":{\"backend\":\"" + backend + "\"},\"threads\":1,"
                + "\"operations\":1000,\"redisVersion\":\"7.0.15\",\"perServer\":[{\"evalsha\":2.0}],\"mix\":\""
                + line + "\"}";
    }

    @Test
    @DisplayName("the run's time is when its newest result was written, not when the page is rendered")
    void runEndedIsTheNewestResultsTime() throws IOException {
        Path older = Files.writeString(dir.resolve("01-a.json"), "[]");
        Path newer = Files.writeString(dir.resolve("02-b.json"), "[]");
        Path notAResult = Files.writeString(dir.resolve("commands.txt"), "x");
        Files.setLastModifiedTime(older, FileTime.from(Instant.parse("2026-11-30T12:00:00Z")));
        Files.setLastModifiedTime(newer, FileTime.from(Instant.parse("2026-11-30T12:50:00Z")));
        Files.setLastModifiedTime(notAResult, FileTime.from(Instant.parse("2026-11-30T13:24:00Z")));

        assertThat(BenchReport.runEnded(dir)).isEqualTo(ZonedDateTime.of(2026, 11, 30, 12, 50, 0, 0, ZoneOffset.UTC));
    }

    @Test
    @DisplayName("rows carry their figure, their checked mix and their throughput as a fraction of their floor")
    void rendersRatiosAgainstTheFloor() throws IOException {
        Files.writeString(
                dir.resolve("1.json"),
                "[" + result("floor-redis", 50.0, 5.0) + "," + result("redis", 100.0, 10.0) + "]");
        Files.writeString(
                dir.resolve("mix.jsonl"),
                mix("floor-redis", "evalsha 2.00, get 2.00") + "\n" + mix("redis", "evalsha 2.00, get 2.00") + "\n");
        List<BenchReport.Row> rows = BenchReport.load(dir);
        String md = BenchReport.render(
                rows,
                List.of("scripts/bench"),
                "abc1234",
                ZonedDateTime.of(2026, 11, 22, 8, 0, 0, 0, ZoneOffset.UTC),
                new BenchReport.Machine(2, "Test CPU", "OpenJDK 17", Map.of("Lockstep", "0.1.0")));
        assertThat(md)
                .contains(
                        "| `redis` | lock-redis, one node | 100.0 ± 10.0 | 10,000 | 0.50× (0.41–0.61) of `floor-redis` |"
                                + " evalsha 2.00, get 2.00 |")
                .contains("2 cores (Test CPU)")
                .contains("redis-server 7.0.15")
                .contains("commit `abc1234`")
                .contains("scripts/bench");
    }

    @Test
    @DisplayName(
            "ShedLock's Redis provider is a peer row: its floor column is lock-redis's and its ratio is against redis")
    void rendersShedLockRedisAsAPeerOfRedis() throws IOException {
        Files.writeString(
                dir.resolve("1.json"),
                "[" + result("floor-redis", 50.0, 5.0) + "," + result("redis", 100.0, 10.0) + ","
                        + result("shedlock-redis", 80.0, 8.0) + "]");
        Files.writeString(
                dir.resolve("mix.jsonl"),
                mix("floor-redis", "evalsha 2.00, get 2.00") + "\n" + mix("redis", "evalsha 2.00, get 2.00") + "\n"
                        + mix("shedlock-redis", "del 1.00, set 1.00") + "\n");
        String md = BenchReport.render(
                BenchReport.load(dir),
                List.of("scripts/bench"),
                "abc1234",
                ZonedDateTime.of(2026, 11, 22, 8, 0, 0, 0, ZoneOffset.UTC),
                new BenchReport.Machine(2, "Test CPU", "OpenJDK 17", Map.of("Lockstep", "0.1.0")));
        assertThat(md)
                .contains("| `shedlock-redis` | " + BenchReport.WHAT.get("shedlock-redis")
                        + " | 80.0 ± 8.0 | 12,500 | 0.63× (0.51–0.76) of `floor-redis` | del 1.00, set 1.00 |")
                .contains("Lockstep's throughput against shedlock-redis: `redis` / `shedlock-redis` = **0.80×");
    }

    @Test
    @DisplayName("RedissonRedLock on N nodes is the peer of redlock-N: its floor column is redlock-N's floor and the"
            + " headline puts it beside redlock-N")
    void rendersRedissonRedLockAsThePeerOfRedlock() throws IOException {
        Files.writeString(
                dir.resolve("1.json"),
                "[" + result("floor-redlock-3", 100.0, 5.0) + "," + result("redlock-3", 120.0, 6.0) + ","
                        + result("redisson-redlock-3", 480.0, 12.0) + "]");
        Files.writeString(
                dir.resolve("mix.jsonl"),
                mix("floor-redlock-3", "evalsha 2.00") + "\n" + mix("redlock-3", "evalsha 2.00") + "\n"
                        + mix("redisson-redlock-3", "evalsha 3.00, pexpire 2.00") + "\n");
        String md = BenchReport.render(
                BenchReport.load(dir),
                List.of("scripts/bench"),
                "abc1234",
                ZonedDateTime.of(2026, 11, 29, 8, 0, 0, 0, ZoneOffset.UTC),
                new BenchReport.Machine(2, "Test CPU", "OpenJDK 17", Map.of("Lockstep", "0.1.0")));

        assertThat(BenchReport.floorOf("redisson-redlock-5")).isEqualTo("floor-redlock-5");
        assertThat(BenchReport.isLockstep("redisson-redlock-1")).isFalse();
        assertThat(md)
                .contains("| `redisson-redlock-3` | " + BenchReport.WHAT.get("redisson-redlock-3") + " | 480.0 ± 12.0 |"
                        + " 2,083 | 0.21× (0.19–0.22) of `floor-redlock-3` | evalsha 3.00, pexpire 2.00 |")
                .contains("| `redlock-3` | 1.20× | `redisson-redlock-3` 0.25× |")
                .contains(
                        "Lockstep's throughput against redisson-redlock-3: `redlock-3` / `redisson-redlock-3` = **4.00×")
                .doesNotContain("| `redisson-redlock-3` | 4.80×");
    }

    @Test
    @DisplayName("a result without a checked command mix is refused: its trial proved nothing")
    void refusesAResultWithoutAMix() throws IOException {
        Files.writeString(dir.resolve("1.json"), "[" + result("redis", 100.0, 10.0) + "]");
        Files.writeString(dir.resolve("mix.jsonl"), "");
        assertThatThrownBy(() -> BenchReport.load(dir))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no checked command mix");
    }

    @Test
    @DisplayName("every benchmark class is rendered from JSON: floor and peer ratios, handoff percentiles, the command")
    void rendersEtcdSectionsWithPeersPercentilesAndTheirCommand() throws IOException {
        String uncontended = "io.lockstep.bench.EtcdBenchmark.acquireRelease";
        String handoff = "io.lockstep.bench.EtcdBenchmark.handoff";
        Files.writeString(
                dir.resolve("10-etcd.json"),
                "[" + avgt(uncontended, "jetcd-floor", 1000.0) + "," + avgt(uncontended, "etcd", 1250.0) + ","
                        + avgt(uncontended, "jetcd-lock", 2500.0) + "]");
        Files.writeString(
                dir.resolve("12-etcd-handoff.json"),
                "[" + sample(handoff, "etcd", 900.0) + "," + sample(handoff, "jetcd-lock", 1800.0) + "]");
        StringBuilder mixes = new StringBuilder();
        for (String backend : List.of("jetcd-floor", "etcd", "jetcd-lock")) {
            mixes.append(seen(
                            uncontended, backend, backend.equals("jetcd-lock") ? "Lock 1.00, Unlock 1.00" : "Txn 2.00"))
                    .append('\n');
        }
        mixes.append(seen(handoff, "etcd", "Txn 4.00")).append('\n');
        Files.writeString(dir.resolve("mix.jsonl"), mixes.toString());
        String command = "java -jar benchmarks.jar EtcdBenchmark.acquireRelease -rf json -rff out/10-etcd.json";

        String md = BenchReport.render(
                BenchReport.load(dir),
                List.of(command, "java -jar benchmarks.jar EtcdBenchmark.handoff -rff out/12-etcd-handoff.json"),
                "abc1234",
                ZonedDateTime.of(2026, 11, 22, 8, 0, 0, 0, ZoneOffset.UTC),
                new BenchReport.Machine(2, "Test CPU", "OpenJDK 17", Map.of("Lockstep", "0.1.0")));

        assertThat(md)
                .contains("## etcd: uncontended acquire + release, 1 thread\n\nCommand: `" + command + "`")
                .contains(
                        "| `etcd` | lock-etcd | 1250.0 ± 10.0 | 800 | 0.80× (0.79–0.81) of `jetcd-floor` | Txn 2.00 |")
                .contains("`etcd` / `jetcd-lock` = **2.00× (1.98–2.02)**")
                .contains("## etcd: handoff from a holder to a queued waiter, 1 thread")
                .contains("| 900.0 | 1,800.0 |")
                .contains("handoff p50 of `jetcd-lock` / `etcd` = **2.00×**")
                .contains("not counted by this trial")
                .contains("servers: etcd 3.5.16");
    }

    @Test
    @DisplayName("contended handoffs get a section per server and thread count, with calls per grant and peer ratios")
    void rendersContendedHandoffsPerServerAndThreads() throws IOException {
        String bench = "io.lockstep.bench.HandoffBenchmark.handoff";
        StringBuilder mixes = new StringBuilder();
        List<String> commands = new java.util.ArrayList<>();
        Map<String, List<String>> backends = new java.util.LinkedHashMap<>();
        backends.put("redis", List.of("redis", "redisson-rlock"));
        backends.put("etcd", List.of("etcd", "jetcd-lock"));
        backends.put("zookeeper", List.of("lockstep", "curator-mutex"));
        backends.put("postgresql", List.of("lease", "session"));
        for (Map.Entry<String, List<String>> server : backends.entrySet()) {
            for (int threads : List.of(2, 8)) {
                String file = server.getKey() + "-t" + threads + ".json";
                StringBuilder results = new StringBuilder();
                double p50 = 100.0 * threads;
                for (String backend : server.getValue()) {
                    String params = "{\"backend\":\"" + backend + "\",\"holdMicros\":\"1000\",\"server\":\""
                            + server.getKey() + "\"}";
                    results.append(results.length() == 0 ? "" : ",")
                            .append(
                                    """
                                    {"benchmark": "%s", "mode": "sample", "threads": %d, "forks": 1, "params": %s,
                                     "primaryMetric": {"score": %s, "scoreError": 10.0, "scoreUnit": "us/op",
                                      "scorePercentiles": {"50.0": %s, "99.0": %s, "99.9": %s}}}"""
                                            .formatted(bench, threads, params, p50, p50, 2 * p50, 3 * p50));
                    mixes.append("{\"benchmark\":\"" + bench + "\",\"params\":" + params + ",\"threads\":"
                                    + threads + ",\"operations\":500,\"redisVersion\":\"" + server.getKey()
                                    + " 1.0\",\"perServer\":[{\"calls\":3.0}],\"mix\":\"calls " + backend + " t"
                                    + threads + "\"}")
                            .append('\n');
                    p50 *= 3;
                }
                Files.writeString(dir.resolve(file), "[" + results + "]");
                commands.add("java -jar benchmarks.jar HandoffBenchmark -p server=" + server.getKey() + " -t " + threads
                        + " -rff out/" + file);
            }
        }
        Files.writeString(dir.resolve("mix.jsonl"), mixes.toString());

        String md = BenchReport.render(
                BenchReport.load(dir),
                commands,
                "abc1234",
                ZonedDateTime.of(2026, 11, 22, 8, 0, 0, 0, ZoneOffset.UTC),
                new BenchReport.Machine(2, "Test CPU", "OpenJDK 17", Map.of("Lockstep", "0.1.0")));

        assertThat(md)
                .contains("## Redis: contended handoff, every thread on one lock name, 2 threads\n\nCommand: `"
                        + commands.get(0) + "`")
                .contains("## etcd: contended handoff, every thread on one lock name, 8 threads\n\nCommand: `"
                        + commands.get(3) + "`")
                .contains("## ZooKeeper: contended handoff, every thread on one lock name, 2 threads")
                .contains("## PostgreSQL: contended handoff, every thread on one lock name, 8 threads")
                .contains("| `jetcd-lock` | " + BenchReport.WHAT.get("jetcd-lock")
                        + " | 2,400.0 | 4,800.0 | 7,200.0 | 2400.0 ± 10.0 | 500 | calls jetcd-lock t8 |")
                .contains("| `session` | " + BenchReport.WHAT.get("session")
                        + " | 600.0 | 1,200.0 | 1,800.0 | 600.0 ± 10.0 | 500 | calls session t2 |")
                .contains("hold it 1000 µs (not timed)")
                .contains("curator-mutex against Lockstep: handoff p50 of `curator-mutex` / `lockstep` = **3.00×**, p99"
                        + " 3.00× (ZooKeeper: contended handoff, every thread on one lock name, 8 threads)")
                .contains("handoff p50 of `redisson-rlock` / `redis` = **3.00×**");
        // each server and thread count is a section of its own: 8 headings, no rows mixed across servers
        assertThat(md.split("contended handoff, every thread on one lock name, [28] threads\n\nCommand"))
                .hasSize(9);
    }

    @Test
    @DisplayName(
            "the headline puts every Lockstep contender against its floor and peers, PostgreSQL with fsync on only")
    void headlineComparesLockstepWithItsFloorAndPeersWithFsyncOn() throws IOException {
        String callers = "io.lockstep.bench.JdbcCallersBenchmark.acquireRelease";
        StringBuilder mixes = new StringBuilder();
        for (String fsync : List.of("on", "off")) {
            StringBuilder results = new StringBuilder();
            double scale = fsync.equals("on") ? 10 : 1;
            Map<String, Double> p50 = new java.util.LinkedHashMap<>();
            p50.put("floor-lease", 100.0 * scale);
            p50.put("lease", 110.0 * scale);
            p50.put("floor-session", 200.0 * scale);
            p50.put("session", 180.0 * scale);
            p50.put("shedlock-jdbc", 220.0 * scale);
            for (Map.Entry<String, Double> e : p50.entrySet()) {
                String params = "{\"lock\":\"" + e.getKey() + "\",\"fsync\":\"" + fsync + "\"}";
                results.append(results.length() == 0 ? "" : ",")
                        .append(
                                """
                                {"benchmark": "%s", "mode": "sample", "threads": 4, "forks": 1, "params": %s,
                                 "primaryMetric": {"score": %s, "scoreError": 10.0, "scoreUnit": "us/op",
                                  "scorePercentiles": {"50.0": %s, "99.0": %s, "99.9": %s}}}"""
                                        .formatted(
                                                callers,
                                                params,
                                                e.getValue(),
                                                e.getValue(),
                                                4 * e.getValue(),
                                                8 * e.getValue()));
                mixes.append("{\"benchmark\":\"" + callers + "\",\"params\":" + params + ",\"threads\":4,"
                                + "\"operations\":500,\"redisVersion\":\"PostgreSQL 15, fsync=" + fsync
                                + "\",\"perServer\":[{\"xact_commit\":2.0}],"
                                + "\"mix\":\"xact_commit 2.00\"}")
                        .append('\n');
            }
            Files.writeString(dir.resolve("callers-" + fsync + ".json"), "[" + results + "]");
        }
        Files.writeString(
                dir.resolve("1.json"),
                "[" + result("floor-redis", 50.0, 5.0) + "," + result("redis", 100.0, 10.0) + ","
                        + result("redisson-rlock", 200.0, 8.0) + "," + result("jedis-setnx", 40.0, 4.0) + "]");
        for (String backend : List.of("floor-redis", "redis", "redisson-rlock", "jedis-setnx")) {
            mixes.append(mix(backend, "evalsha 2.00")).append('\n');
        }
        Files.writeString(dir.resolve("mix.jsonl"), mixes.toString());

        String md = BenchReport.render(
                BenchReport.load(dir),
                List.of("scripts/bench"),
                "abc1234",
                ZonedDateTime.of(2026, 11, 22, 8, 0, 0, 0, ZoneOffset.UTC),
                new BenchReport.Machine(2, "Test CPU", "OpenJDK 17", Map.of("Lockstep", "0.1.0")));

        String headline = md.substring(md.indexOf("## Headline"), md.indexOf("\n## ", md.indexOf("## Headline") + 1));
        assertThat(headline)
                .contains("| Redis: uncontended acquire + release on loopback, 1 thread | `redis` | 2.00× |"
                        + " `redisson-rlock` 0.50× |")
                .contains("| PostgreSQL (fsync=on): uncontended acquire + release, each caller on a lock of its own,"
                        + " 4 threads | `lease` | p50 1.10×, p99 1.10× | `shedlock-jdbc` p50 0.50×, p99 0.50× |")
                .contains("| `session` | p50 0.90×, p99 0.90× | `shedlock-jdbc` p50 0.82×, p99 0.82× |")
                .doesNotContain("PostgreSQL (fsync=off)")
                .doesNotContain("`jedis-setnx` |")
                .doesNotContain("| `floor-");
        // the fsync=off figures keep their own labelled section, and ShedLock's JDBC floor column is lease mode's
        assertThat(md)
                .contains("## PostgreSQL (fsync=off): uncontended acquire + release")
                .contains("Lockstep's throughput against redisson-rlock")
                .contains("| `shedlock-jdbc` | " + BenchReport.WHAT.get("shedlock-jdbc"));
        assertThat(md.indexOf("## Headline")).isLessThan(md.indexOf("## Redis: uncontended"));
        // the server list names PostgreSQL once; each section says its fsync
        assertThat(md).contains("servers: redis-server 7.0.15, PostgreSQL 15.\n");
    }

    private static String avgt(String benchmark, String backend, double score) {
        return """
                {"benchmark": "%s", "mode": "avgt", "threads": 1, "forks": 1, "params": {"backend": "%s"},
                 "primaryMetric": {"score": %s, "scoreError": 10.0, "scoreUnit": "us/op"}}"""
                .formatted(benchmark, backend, score);
    }

    private static String sample(String benchmark, String backend, double p50) {
        return """
                {"benchmark": "%s", "mode": "sample", "threads": 1, "forks": 1, "params": {"backend": "%s"},
                 "primaryMetric": {"score": %s, "scoreError": 10.0, "scoreUnit": "us/op",
                  "scorePercentiles": {"50.0": %s, "99.0": %s, "99.9": %s}}}"""
                .formatted(benchmark, backend, p50, p50, 2 * p50, 3 * p50);
    }

    private static String seen(String benchmark, String backend, String line) {
        return "{\"benchmark\":\"" + benchmark + "\",\"params\":{\"backend\":\"" + backend + "\"},\"threads\":1,"
                + "\"operations\":1000,\"redisVersion\":\"etcd 3.5.16\",\"perServer\":[{\"Txn\":2.0}],\"mix\":\""
                + line + "\"}";
    }

    /** Renewal-at-scale results: {@code (backend, leases, heap per lease)}, one JSON file per lease count. */
    private void writeRenewalRun(List<Object[]> trials) throws IOException {
        String bench = "io.lockstep.bench.RenewalAtScaleBenchmark.hold";
        StringBuilder mixes = new StringBuilder();
        Map<String, StringBuilder> files = new java.util.TreeMap<>();
        for (Object[] trial : trials) {
            String params = "{\"backend\":\"" + trial[0] + "\",\"holdSeconds\":\"60\",\"leaseSeconds\":\"30\","
                    + "\"leases\":\"" + trial[1] + "\"}";
            StringBuilder results = files.computeIfAbsent("40-renewal-" + trial[1] + ".json", f -> new StringBuilder());
            results.append(results.length() == 0 ? "" : ",")
                    .append(
                            """
                            {"benchmark": "%s", "mode": "ss", "threads": 1, "forks": 1, "params": %s,
                             "primaryMetric": {"score": 60.0, "scoreError": "NaN", "scoreUnit": "s/op"}}"""
                                    .formatted(bench, params));
            mixes.append("{\"benchmark\":\"" + bench + "\",\"params\":" + params + ",\"threads\":1,\"operations\":"
                            + trial[1] + ",\"redisVersion\":\"7.0.15\",\"perServer\":[{\"renewal round trips/s\":"
                            + trial[3] + ",\"requests/s\":20.0,\"heap per lease B\":" + trial[2]
                            + ",\"threads peak\":27.0}],\"mix\":\"figures\"}")
                    .append('\n');
        }
        for (Map.Entry<String, StringBuilder> file : files.entrySet()) {
            Files.writeString(dir.resolve(file.getKey()), "[" + file.getValue() + "]");
        }
        Files.writeString(dir.resolve("mix.jsonl"), mixes.toString());
    }

    @Test
    @DisplayName("a renewal section names its servers, shows heap per lease and round trips, and Redisson's largest"
            + " run beside a count it did not run at")
    void rendersRenewalAtScaleWithARedissonReference() throws IOException {
        writeRenewalRun(List.of(
                new Object[] {"redis-renewed", 10000, 1030.0, 2.0},
                new Object[] {"redisson-watchdog", 10000, 1500.0, 10.0},
                new Object[] {"redis-renewed", 100000, 900.0, 20.0},
                new Object[] {"etcd-renewed", 100000, 1400.0, 79.5}));

        String md = BenchReport.render(
                BenchReport.load(dir),
                List.of(),
                "abc1234",
                ZonedDateTime.of(2026, 11, 27, 8, 0, 0, 0, ZoneOffset.UTC),
                new BenchReport.Machine(2, "Test CPU", "OpenJDK 17", Map.of("Lockstep", "0.1.0")));

        assertThat(md)
                .contains("## Redis: 10,000 auto-renewed leases held for 60 s (lease 30 s)")
                .contains("## Redis and etcd: 100,000 auto-renewed leases held for 60 s (lease 30 s)")
                .contains("| `etcd-renewed` | " + BenchReport.WHAT.get("etcd-renewed")
                        + " | 100,000 | 79.5 | 20 |  | 1,400 |  |  | 27 | n/a |")
                .contains("The `redisson-watchdog` row is its largest run of this page (10,000 leases");
        String big = md.substring(md.indexOf("## Redis and etcd: 100,000"));
        assertThat(big)
                .contains("| `redisson-watchdog` | " + BenchReport.WHAT.get("redisson-watchdog")
                        + " | 10,000 | 10.0 | 20 |  | 1,500 |");
        assertThat(md.substring(md.indexOf("## Redis: 10,000"), md.indexOf("## Redis and etcd")))
                .doesNotContain("largest run");
    }

    @Test
    @DisplayName("splicing replaces the sections of the same title, adds new ones before the ratios, keeps the rest")
    void splicesSectionsIntoAPage() throws IOException {
        writeRenewalRun(List.of(
                new Object[] {"redis-renewed", 10000, 1030.0, 2.0},
                new Object[] {"redis-renewed", 100000, 900.0, 20.0}));
        String page = "# Benchmarks\n\nheader\n\n## Redis: uncontended, 1 thread\n\nkept\n\n"
                + "## Redis: 10,000 auto-renewed leases held for 60 s (lease 30 s)\n\nold figures\n\n"
                + "## Ratios in this run\n\n- ratio\n";

        String out = BenchReport.splice(
                page,
                BenchReport.load(dir),
                List.of(),
                "def5678",
                ZonedDateTime.of(2026, 11, 27, 17, 0, 0, 0, ZoneOffset.UTC));

        assertThat(out)
                .startsWith("# Benchmarks\n\nheader\n\n## Redis: uncontended, 1 thread\n\nkept\n\n")
                .doesNotContain("old figures")
                .contains("## Redis: 10,000 auto-renewed leases held for 60 s (lease 30 s)\n\nSpliced into this page"
                        + " from a run of 2026-11-27 17:00 UTC, commit `def5678`")
                .endsWith("## Ratios in this run\n\n- ratio\n");
        assertThat(out.indexOf("## Redis: 100,000"))
                .isBetween(out.indexOf("## Redis: 10,000"), out.indexOf("## Ratios"));
    }
}
