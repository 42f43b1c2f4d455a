package io.lockstep.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.Gson;
import io.lockstep.bench.RatioRounds.Figures;
import io.lockstep.bench.RatioRounds.Row;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class RatioRoundsTest {

    @Test
    @DisplayName("a row meets its target by the median of its rounds' ratios, and every round is shown")
    void medianDecides() {
        Row redlock = RatioRounds.rows().stream()
                .filter(r -> r.contender().equals("redlock-5"))
                .findFirst()
                .orElseThrow();
        // Ratios to the floor 1.30, 1.05, 1.08: one slow round does not decide; to the peer 0.2 each round.
        List<Map<String, Figures>> rounds =
                List.of(figures(130, 100, 650), figures(105, 100, 525), figures(108, 100, 540));
        Map<Row, List<Map<String, Figures>>> results = new LinkedHashMap<>();
        results.put(redlock, rounds);
        ZonedDateTime at = ZonedDateTime.of(2026, 11, 30, 1, 0, 0, 0, ZoneOffset.UTC);

        String md = RatioRounds.render(results, 3, "abc1234", at, at.plusMinutes(5));

        assertThat(md)
                .contains("at commit abc1234, 2026-11-30 01:00 UTC to 2026-11-30 01:05 UTC")
                .contains("`redlock-5` ÷ `floor-redlock-5`, mean | ≤ 1.10× | 1.08× | 1.05×–1.30× | yes |")
                .contains("`redlock-5` ÷ `redisson-redlock-5`, mean | ≤ 1.00× | 0.20× | 0.20×–0.20× | yes |")
                .contains(
                        "| 1 | floor-redlock-5, redisson-redlock-5, redlock-5 | 100.0 | 650.0 | 130.0 | 1.30× | 0.20× |")
                .contains("java -jar lock-bench/target/benchmarks.jar AcquireReleaseBenchmark.acquireRelease"
                        + " -p backend=redlock-5 -f 1 -wi 10 -w 1 -i 5 -r 1 -t 1 -foe true");
        assertThat(RatioRounds.median(new double[] {3, 1, 2, 10})).isEqualTo(2.5);

        // The raw figures give the same page; a round left unfinished is not counted.
        Gson gson = new Gson();
        List<String> lines = new ArrayList<>();
        lines.add(gson.toJson(Map.of("commit", "abc1234", "started", at.toString(), "rounds", 3)));
        // A trial that failed and was run again leaves a line of its own, which does not count.
        lines.add(gson.toJson(
                Map.of("row", redlock.title(), "round", 1, "contender", "redisson-redlock-5", "failed", "timeout")));
        for (int round = 0; round < rounds.size(); round++) {
            for (Map.Entry<String, Figures> e : rounds.get(round).entrySet()) {
                Figures f = e.getValue();
                lines.add(gson.toJson(RatioRounds.Trial.of(
                        redlock.title(), round + 1, e.getKey(), new Figures(f.mean(), Double.NaN, Double.NaN))));
            }
        }
        lines.add(gson.toJson(new RatioRounds.Trial(redlock.title(), 4, "floor-redlock-5", 1, null, null)));
        lines.add(gson.toJson(Map.of("ended", at.plusMinutes(5).toString())));
        assertThat(RatioRounds.renderFrom(lines)).isEqualTo(md);

        results.put(redlock, List.of(figures(130, 100, 650), figures(120, 100, 600), figures(108, 100, 540)));
        assertThat(RatioRounds.render(results, 3, "abc1234", at, at))
                .contains("`redlock-5` ÷ `floor-redlock-5`, mean | ≤ 1.10× | 1.20× | 1.08×–1.30× | **no** |");
    }

    private static Map<String, Figures> figures(double contender, double floor, double peer) {
        Map<String, Figures> f = new LinkedHashMap<>();
        f.put("floor-redlock-5", new Figures(floor, floor, floor));
        f.put("redisson-redlock-5", new Figures(peer, peer, peer));
        f.put("redlock-5", new Figures(contender, contender, contender));
        return f;
    }
}
