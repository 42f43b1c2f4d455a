package io.lockstep.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
    @DisplayName("a result without a checked command mix is refused: its trial proved nothing")
    void refusesAResultWithoutAMix() throws IOException {
        Files.writeString(dir.resolve("1.json"), "[" + result("redis", 100.0, 10.0) + "]");
        Files.writeString(dir.resolve("mix.jsonl"), "");
        assertThatThrownBy(() -> BenchReport.load(dir))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no checked command mix");
    }
}
