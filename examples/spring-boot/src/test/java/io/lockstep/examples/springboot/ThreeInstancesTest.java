package io.lockstep.examples.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.tck.servers.RedisServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example application as three JVMs on one Redis the test starts: every JVM schedules the report
 * every two seconds; the ledger they share must show exactly one run per tick over at least 20 ticks,
 * and when the JVM running the report is killed (SIGKILL, by its pid) the report must move to another
 * JVM once the killed one's lease has run out, never twice in one tick.
 */
class ThreeInstancesTest {

    private static final long TICK_MILLIS = 2_000;
    private static final int TICKS = 20;
    private static final Duration LEASE = Duration.ofSeconds(3);

    private final List<Process> instances = new ArrayList<>();
    private RedisServer redis;

    @AfterEach
    void stop() throws InterruptedException {
        for (Process p : instances) {
            p.destroy();
        }
        for (Process p : instances) {
            if (!p.waitFor(15, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(15, TimeUnit.SECONDS);
            }
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    @DisplayName("three JVMs run the scheduled report exactly once per tick; killing the runner moves it to another")
    void oneRunPerTickAndFailover(@TempDir Path dir) throws Exception {
        redis = RedisServer.start();
        Path ledger = dir.resolve("ledger.txt");
        for (int i = 0; i < 3; i++) {
            instances.add(launch(redis.uri(), ledger, dir.resolve("instance-" + i + ".log")));
        }
        List<Entry> history = awaitLedger(ledger, h -> count(h, "ready") == 3, Duration.ofSeconds(120), dir);
        long allReady = history.stream()
                .filter(e -> e.event.equals("ready"))
                .mapToLong(e -> e.millis)
                .max()
                .orElseThrow();
        long firstTick = allReady / TICK_MILLIS + 1;

        // At least TICKS whole ticks with all three running, then kill the JVM that runs the next one.
        history = awaitLedger(
                ledger,
                h -> h.stream().anyMatch(e -> e.event.equals("start") && tick(e) >= firstTick + TICKS),
                Duration.ofSeconds(120),
                dir);
        int seen = history.size();
        history = awaitLedger(
                ledger,
                h -> h.subList(seen, h.size()).stream().anyMatch(e -> e.event.equals("start")),
                Duration.ofSeconds(60),
                dir);
        Entry running = history.subList(seen, history.size()).stream()
                .filter(e -> e.event.equals("start"))
                .findFirst()
                .orElseThrow();
        Process victim = instances.stream()
                .filter(p -> p.pid() == running.pid)
                .findFirst()
                .orElseThrow();
        victim.destroyForcibly();
        long killedAt = System.currentTimeMillis();
        assertThat(victim.waitFor(30, TimeUnit.SECONDS))
                .as("the killed JVM exits")
                .isTrue();
        long killTick = tick(running);

        // The report moves to another JVM: wait for two more of its runs there.
        history = awaitLedger(
                ledger,
                h -> h.stream()
                                .filter(e -> e.event.equals("start") && e.pid != running.pid && e.millis > killedAt)
                                .count()
                        >= 2,
                Duration.ofSeconds(60),
                dir);

        Map<Long, List<Entry>> startsByTick = history.stream()
                .filter(e -> e.event.equals("start"))
                .collect(Collectors.groupingBy(ThreeInstancesTest::tick, TreeMap::new, Collectors.toList()));
        // Exactly one run in each tick while all three were up (the kill tick's run is the victim's).
        for (long t = firstTick; t <= killTick; t++) {
            assertThat(startsByTick.getOrDefault(t, List.of()))
                    .as("runs in tick %d (all three up)", t)
                    .hasSize(1);
        }
        // Never two runs in one tick, before or after the kill.
        startsByTick.forEach(
                (t, runs) -> assertThat(runs).as("runs in tick %d", t).hasSizeLessThanOrEqualTo(1));
        // Fences grow with every run, across JVMs.
        List<Long> fences = history.stream()
                .filter(e -> e.event.equals("start"))
                .map(e -> e.fence)
                .toList();
        assertThat(fences).isSorted().doesNotHaveDuplicates();
        assertThat(history.stream().filter(e -> e.pid == running.pid && e.millis > killedAt))
                .as("nothing from the killed JVM after the kill")
                .isEmpty();

        Entry takeover = history.stream()
                .filter(e -> e.event.equals("start") && e.pid != running.pid && e.millis > killedAt)
                .findFirst()
                .orElseThrow();
        boolean killedMidRun = history.stream()
                .noneMatch(e -> e.pid == running.pid && e.event.equals("end") && e.fence == running.fence);
        System.out.printf(
                "three JVMs: %d ticks with all up, one run each; killed pid %d %s; another JVM (pid %d) ran"
                        + " the report %d ms after the kill (lease %s, tick %d ms); %d empty ticks while the lease"
                        + " ran out%n",
                killTick - firstTick + 1,
                running.pid,
                killedMidRun ? "while it ran the report" : "after its run (lease kept by holdAtLeast)",
                takeover.pid,
                takeover.millis - killedAt,
                LEASE,
                TICK_MILLIS,
                tick(takeover) - killTick - 1);
    }

    private static Process launch(String redisUri, Path ledger, Path log) throws IOException {
        List<String> command = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx160m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                ReportApplication.class.getName(),
                "--lockstep.uri=" + redisUri,
                "--report.ledger=" + ledger,
                "--report.lease=" + LEASE.toMillis() + "ms");
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
    }

    private List<Entry> awaitLedger(Path ledger, Predicate<List<Entry>> done, Duration bound, Path dir)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            List<Entry> history = read(ledger);
            if (done.test(history)) {
                return history;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("ledger did not reach the expected state within " + bound + ":\n"
                        + String.join(
                                "\n", history.stream().map(Entry::toString).toList()) + "\n" + logs(dir));
            }
            for (Process p : instances) {
                if (!p.isAlive() && p.exitValue() != 137 && p.exitValue() != 143) {
                    throw new AssertionError(
                            "instance " + p.pid() + " exited with " + p.exitValue() + "\n" + logs(dir));
                }
            }
            Thread.sleep(20);
        }
    }

    private static String logs(Path dir) throws IOException {
        StringBuilder out = new StringBuilder();
        try (var files = Files.list(dir)) {
            for (Path log :
                    files.filter(f -> f.toString().endsWith(".log")).sorted().toList()) {
                List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
                out.append("--- ").append(log.getFileName()).append('\n');
                lines.subList(Math.max(0, lines.size() - 40), lines.size())
                        .forEach(l -> out.append(l).append('\n'));
            }
        }
        return out.toString();
    }

    private static List<Entry> read(Path ledger) throws IOException {
        if (!Files.exists(ledger)) {
            return List.of();
        }
        List<Entry> entries = new ArrayList<>();
        for (String line : Files.readAllLines(ledger, StandardCharsets.UTF_8)) {
            String[] f = line.strip().split(" ");
            if (f.length >= 3) {
                entries.add(new Entry(
                        Long.parseLong(f[0]), Long.parseLong(f[1]), f[2], f.length > 3 ? Long.parseLong(f[3]) : -1));
            }
        }
        return entries;
    }

    private static long count(List<Entry> history, String event) {
        return history.stream().filter(e -> e.event.equals(event)).count();
    }

    private static long tick(Entry e) {
        return e.millis / TICK_MILLIS;
    }

    private record Entry(long millis, long pid, String event, long fence) {}
}
