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
    static Path jsonFile;

    @BeforeAll
    static void compare() throws Exception {
        report = dir.resolve("report.html");
        jsonFile = dir.resolve("report.json");
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
        // A busy machine may start the fault late; the note then says so after the verdict.
        assertThat(pause.get("note").asText()).startsWith("woke up and wrote: rejected by its fence");
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
    @DisplayName(
            "the HTML report renders every chart with the run's data in headless Chromium, without script errors (item 6)")
    void theReportRenders() throws Exception {
        String html = Files.readString(report, StandardCharsets.UTF_8);
        // Self-contained: nothing is loaded from anywhere (Chart.js' licence comment names its site, as text).
        assertThat(html).doesNotContain("<script src=", "<link ", "src=\"http", "href=\"http", "import(");
        String dom = Chromium.dumpDom(report);
        assertThat(attribute(dom, "data-errors"))
                .as(dom.length() > 4000 ? dom.substring(0, 4000) : dom)
                .isNull();
        String status = attribute(dom, "data-rendered");
        assertThat(status)
                .as(dom.length() > 4000 ? dom.substring(0, 4000) : dom)
                .startsWith("RENDERED ");
        JsonNode charts = new ObjectMapper().readTree(status.substring("RENDERED ".length()));
        JsonNode redis = json.get("backends").get(0);
        assertThat(charts).hasSize(4);
        // The verdicts, in the words the JSON carries, one card per backend.
        assertThat(charts.get(0).get("id").asText()).isEqualTo("verdicts");
        assertThat(charts.get(0).get("elements").asInt()).isEqualTo(1);
        JsonNode verdict = json.get("verdicts").get(0);
        assertThat(dom).contains(escape(verdict.get("summary").asText()));
        for (JsonNode f : verdict.get("faults")) {
            assertThat(dom).contains(escape(f.get("words").asText()));
        }
        // The timeline: every hold, every failed or timed-out acquire, every fault.
        JsonNode timeline = charts.get(1);
        assertThat(timeline.get("backend").asText()).isEqualTo("redis");
        assertThat(timeline.get("elements").asInt())
                .isEqualTo(redis.get("holds").size()
                        + redis.get("failedAttempts").size()
                        + redis.get("faults").size());
        assertThat(timeline.get("failed").asInt())
                .isEqualTo(redis.get("failedAttempts").size());
        // The CDF: a point per histogram bucket, normalised so that it ends at 1.
        JsonNode cdf = charts.get(2);
        assertThat(cdf.get("id").asText()).isEqualTo("cdf");
        assertThat(cdf.get("elements").asInt())
                .isEqualTo(redis.get("acquireHistogram").size());
        assertThat(cdf.get("ends").get(0).asDouble()).isEqualTo(1.0);
        // Recovery: a bar slot per fault, a value per fault recovered.
        JsonNode recovery = charts.get(3);
        assertThat(recovery.get("elements").asInt()).isEqualTo(FaultKind.values().length);
        long recovered = 0;
        for (JsonNode f : redis.get("faults")) {
            recovered += f.get("recoveryMs").isNumber() ? 1 : 0;
        }
        assertThat(recovery.get("values").asLong()).isEqualTo(recovered);
        // No test plumbing on the page: the mark is an attribute of the body, not text.
        assertThat(dom).doesNotContain("Script status", "id=\"status\"", "not rendered");
        Chromium.screenshot(report, dir.resolve("report.png"), 1400, 1800);
    }

    @Test
    @DisplayName("a script error in the report is shown on the page and marked, so the render check can fail")
    void aBrokenReportIsCaught() throws Exception {
        Path broken = dir.resolve("broken.html");
        String html = Files.readString(report, StandardCharsets.UTF_8);
        Files.writeString(
                broken, html.replace("var report = ", "var report = undefinedName || "), StandardCharsets.UTF_8);
        String dom = Chromium.dumpDom(broken);
        assertThat(attribute(dom, "data-errors")).contains("undefinedName");
        assertThat(attribute(dom, "data-rendered")).isNull();
        assertThat(dom).contains("Some charts could not be drawn");
    }

    @Test
    @DisplayName("the terminal and the JSON carry a verdict per backend and per fault, in the same words")
    void verdictsInTheTableAndTheJson() {
        JsonNode verdict = json.get("verdicts").get(0);
        assertThat(verdict.get("backend").asText()).isEqualTo("redis");
        assertThat(verdict.get("faults")).hasSize(FaultKind.values().length);
        assertThat(run.out())
                .contains("redis: verdict: " + verdict.get("summary").asText());
        for (JsonNode f : verdict.get("faults")) {
            assertThat(f.get("status").asText()).isIn("safe", "not safe", "unsafe, not claimed", "skipped");
            assertThat(run.out())
                    .contains("redis: under " + f.get("label").asText() + ": "
                            + f.get("words").asText());
        }
    }

    @Test
    @DisplayName("lockctl report re-renders the saved JSON, and given two runs compares them figure by figure")
    void reportReRendersAndCompares() throws Exception {
        Path again = dir.resolve("again.html");
        Cli one = Cli.run("report", jsonFile.toString(), "--out", again.toString());
        assertThat(one.exitCode()).as(one.toString()).isZero();
        assertThat(one.out())
                .contains("redis: verdict: "
                        + json.get("verdicts").get(0).get("summary").asText());
        String html = Files.readString(again, StandardCharsets.UTF_8);
        assertThat(html)
                .contains("\"acquisitions\":"
                        + json.get("backends").get(0).get("acquisitions").asLong());

        Path both = dir.resolve("both.html");
        Cli two = Cli.run("report", jsonFile.toString(), jsonFile.toString(), "-o", both.toString());
        assertThat(two.exitCode()).as(two.toString()).isZero();
        assertThat(two.out())
                .contains("(run) against", "(baseline)")
                .containsPattern("redis +\\| +verdict \\| +[a-z, ]+ \\| +[a-z, ]+ \\| +same")
                .containsPattern("redis +\\| +acquired \\| +\\d+ \\| +\\d+ \\| +0%")
                .containsPattern("redis +\\| +recovery holder-pause ms \\|");
        assertThat(Files.readString(both, StandardCharsets.UTF_8)).contains("Compared with the baseline run");

        Cli missing = Cli.run("report", dir.resolve("nope.json").toString());
        assertThat(missing.exitCode()).as(missing.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(missing.err()).contains("nope.json cannot be read");
        Cli notARun = Cli.run("report", report.toString());
        assertThat(notARun.exitCode()).as(notARun.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(notARun.err()).contains("is not a run saved by compare --json");
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    private static String attribute(String dom, String name) {
        Matcher m = Pattern.compile("<body[^>]*\\s" + name + "=\"([^\"]*)\"").matcher(dom);
        return m.find()
                ? m.group(1)
                        .replace("&quot;", "\"")
                        .replace("&amp;", "&")
                        .replace("&lt;", "<")
                        .replace("&gt;", ">")
                : null;
    }

    private static JsonNode find(JsonNode faults, String kind) {
        for (JsonNode f : faults) {
            if (f.get("kind").asText().equals(kind)) {
                return f;
            }
        }
        throw new AssertionError("no fault " + kind + " in " + faults);
    }
}
