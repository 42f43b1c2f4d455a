package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One short compare on a local redis-server with every fault, shared by the tests below: the table, the
 * JSON, and the HTML report rendered in headless Chromium.
 */
@DisplayName("lockctl compare on a local Redis under every fault")
class CompareRedisTest {

    @TempDir
    static Path dir;

    static Cli run;
    static JsonNode json;
    static Path report;

    @BeforeAll
    static void compare() throws Exception {
        report = dir.resolve("report.html");
        Path jsonFile = dir.resolve("report.json");
        run = Cli.run(
                "compare",
                "--backend",
                "redis",
                "--clients",
                "3",
                "--lease",
                "1s",
                "--fault-length",
                "2s",
                "--seed",
                "7",
                "--no-progress",
                "--report",
                report.toString(),
                "--json",
                jsonFile.toString());
        json = new ObjectMapper().readTree(jsonFile.toFile());
    }

    @Test
    @DisplayName("prints one row for the backend and a window row for each fault, and exits 0")
    void printsTheTable() {
        // Redis claims BEST_EFFORT: a killed server forgets its fence counter, which is reported, not fatal.
        assertThat(run.exitCode()).as(run.toString()).isEqualTo(LockCtl.OK);
        assertThat(run.out())
                .contains("backend", "stale writes accepted", "recovery ms", "holder-pause", "server-kill")
                .contains("at the same times on every row");
        assertThat(run.out().lines().filter(l -> l.startsWith("redis ")).count())
                .as(run.toString())
                .isEqualTo(1 + FaultKind.values().length);
    }

    @Test
    @DisplayName(
            "each fault starts when the schedule says, and its recovery falls inside its own window (finding 1, 7)")
    void everyFaultInItsOwnWindow() {
        JsonNode schedule = json.get("schedule");
        JsonNode faults = json.get("backends").get(0).get("faults");
        assertThat(faults).hasSize(schedule.size());
        for (int i = 0; i < faults.size(); i++) {
            JsonNode f = faults.get(i);
            assertThat(f.get("kind").asText())
                    .isEqualTo(schedule.get(i).get("kind").asText());
            assertThat(f.get("scheduledStartMs").asDouble())
                    .isEqualTo(schedule.get(i).get("startMs").asDouble());
            assertThat(f.get("startMs").asDouble())
                    .as("%s starts on time, not after the previous fault", f)
                    .isGreaterThanOrEqualTo(f.get("scheduledStartMs").asDouble());
            if (f.get("recoveryMs").isNumber()) {
                double from = f.get("recoveryFromStart").asBoolean()
                        ? f.get("startMs").asDouble()
                        : f.get("endMs").asDouble();
                assertThat(from + f.get("recoveryMs").asDouble())
                        .as(f.toString())
                        .isLessThanOrEqualTo(f.get("windowEndMs").asDouble());
            }
            if (i + 1 < faults.size()) {
                assertThat(f.get("windowEndMs").asDouble())
                        .isLessThanOrEqualTo(faults.get(i + 1).get("startMs").asDouble());
            }
        }
    }

    @Test
    @DisplayName("a holder cut off while the others go on writes late and its fence refuses the write (item 3)")
    void theHolderPartitionIsFenced() {
        JsonNode redis = json.get("backends").get(0);
        JsonNode cut = find(redis.get("faults"), "holder-partition");
        assertThat(cut.get("note").asText()).contains("(the holder) off; the others went on");
        assertThat(redis.get("staleWritesAccepted").asLong()).isZero();
        // The frozen holder's write and the cut-off holder's late write(s).
        assertThat(redis.get("staleWritesRejectedByFence").asLong())
                .as(run.toString())
                .isGreaterThanOrEqualTo(2);
    }

    @Test
    @DisplayName("the frozen holder's late write is rejected by its fence, and no stale write is accepted")
    void theFenceStopsTheFrozenHolder() {
        JsonNode redis = json.get("backends").get(0);
        assertThat(redis.get("started").asBoolean()).isTrue();
        assertThat(redis.get("acquisitions").asLong()).isPositive();
        assertThat(redis.get("staleWritesAccepted").asLong()).isZero();
        JsonNode pause = find(redis.get("faults"), "holder-pause");
        assertThat(pause.get("note").asText()).isEqualTo("woke up and wrote: rejected by its fence");
        // Another client got the lock after the frozen holder's lease ran out, not before.
        assertThat(pause.get("recoveryMs").asDouble()).isGreaterThan(500.0);
    }

    @Test
    @DisplayName("every fault ran and a client held the lock again after each")
    void everyFaultRecovered() {
        JsonNode faults = json.get("backends").get(0).get("faults");
        assertThat(faults).hasSize(FaultKind.values().length);
        for (JsonNode f : faults) {
            assertThat(f.get("recoveryMs").isNumber()).as(f.toString()).isTrue();
            assertThat(f.get("endMs").asDouble())
                    .as(f.toString())
                    .isGreaterThan(f.get("startMs").asDouble());
        }
    }

    @Test
    @DisplayName("the HTML report renders every chart with the run's data in headless Chromium, without script errors")
    void theReportRenders() throws Exception {
        String html = Files.readString(report, StandardCharsets.UTF_8);
        // Self-contained: nothing is loaded from anywhere (Chart.js' licence comment names its site, as text).
        assertThat(html).doesNotContain("<script src=", "<link ", "src=\"http", "href=\"http", "import(");
        String dom = Chromium.dumpDom(report);
        assertThat(text(dom, "errors"))
                .as(dom.length() > 4000 ? dom.substring(0, 4000) : dom)
                .isEmpty();
        String status = text(dom, "status");
        assertThat(status).startsWith("RENDERED ");
        JsonNode charts = new ObjectMapper()
                .readTree(status.substring("RENDERED ".length()).replace("&quot;", "\""));
        JsonNode redis = json.get("backends").get(0);
        assertThat(charts).hasSize(3);
        assertThat(charts.get(0).get("id").asText()).isEqualTo("timeline-redis");
        assertThat(charts.get(0).get("elements").asInt())
                .isEqualTo(redis.get("holds").size() + redis.get("faults").size());
        assertThat(charts.get(1).get("elements").asInt())
                .isEqualTo(redis.get("acquireHistogram").size());
        assertThat(charts.get(2).get("elements").asInt()).isEqualTo(FaultKind.values().length);
        Chromium.screenshot(report, dir.resolve("report.png"), 1400, 1800);
    }

    @Test
    @DisplayName("a script error in the report is caught and shown, so the render check can fail")
    void aBrokenReportIsCaught() throws Exception {
        Path broken = dir.resolve("broken.html");
        String html = Files.readString(report, StandardCharsets.UTF_8);
        Files.writeString(
                broken, html.replace("var report = ", "var report = undefinedName || "), StandardCharsets.UTF_8);
        String dom = Chromium.dumpDom(broken);
        assertThat(text(dom, "errors")).contains("undefinedName");
        assertThat(text(dom, "status")).isEqualTo("not rendered");
    }

    private static JsonNode find(JsonNode faults, String kind) {
        for (JsonNode f : faults) {
            if (f.get("kind").asText().equals(kind)) {
                return f;
            }
        }
        throw new AssertionError("no fault " + kind + " in " + faults);
    }

    private static String text(String dom, String id) {
        Matcher m = Pattern.compile("<pre id=\"" + id + "\"[^>]*>(.*?)</pre>", Pattern.DOTALL)
                .matcher(dom);
        if (!m.find()) {
            throw new AssertionError("no #" + id + " in the page");
        }
        return m.group(1).strip();
    }
}
