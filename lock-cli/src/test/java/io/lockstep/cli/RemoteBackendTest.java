package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockstep.tck.servers.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A backend lockctl did not start, given by --uri, as a staging server would be. */
@DisplayName("lockctl against a backend given by URI")
class RemoteBackendTest {

    static RedisServer redis;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        redis.close();
    }

    @Test
    @DisplayName("compare --uri injects the client-side faults by default, lists only those, and reads the tier")
    void compareByUriRunsOnlyClientSideFaults(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("r.json");
        Cli r = Cli.run("compare", "--uri", redis.uri(), "--clients", "2", "--no-progress", "--json", json.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        JsonNode all = new ObjectMapper().readTree(json.toFile());
        JsonNode row = all.get("backends").get(0);
        assertThat(row.get("backend").asText()).isEqualTo("redis");
        assertThat(row.get("tier").asText()).isEqualTo("BEST_EFFORT");
        assertThat(all.get("faults"))
                .as("the header lists only the faults that run")
                .extracting(JsonNode::asText)
                .containsExactlyInAnyOrder("holder-pause", "holder-partition", "partition", "clock");
        assertThat(row.get("faults").findValuesAsText("kind"))
                .containsExactlyInAnyOrder("holder-pause", "holder-partition", "partition", "clock");
        assertThat(row.get("staleWritesAccepted").asLong()).isZero();
        assertThat(redis.isRunning())
                .as("a backend lockctl did not start is never killed")
                .isTrue();
    }

    @Test
    @DisplayName("compare --json - writes only JSON on standard output, the table on standard error")
    void jsonOnStandardOutput() throws Exception {
        Cli r = Cli.run(
                "compare",
                "--uri",
                redis.uri(),
                "--duration",
                "1s",
                "--clients",
                "1",
                "--faults",
                "none",
                "--no-progress",
                "--json",
                "-");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        JsonNode all = new ObjectMapper().readTree(r.out());
        assertThat(all.get("backends").get(0).get("acquisitions").asLong()).isPositive();
        assertThat(all.get("backends").get(0).get("faults")).isEmpty();
        assertThat(r.err()).contains("stale writes accepted");
    }

    @Test
    @DisplayName("compare --repeat 2 runs twice and prints each figure's median and range (item 2, finding 18)")
    void repeatPrintsTheSpread() throws Exception {
        Cli r = Cli.run(
                "compare",
                "--uri",
                redis.uri(),
                "--duration",
                "2s",
                "--clients",
                "2",
                "--faults",
                "none",
                "--repeat",
                "2",
                "--no-progress",
                "--json",
                "-");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.err()).contains("over 2 runs", "median [least-most]");
        JsonNode all = new ObjectMapper().readTree(r.out());
        assertThat(all.get("runs").asInt()).isEqualTo(2);
        assertThat(all.get("spread").findValuesAsText("figure")).contains("acquired", "wait p99 ms", "Jain");
    }

    @Test
    @DisplayName("tck --uri runs a group of the kit against the backend and exits 0 when it passes")
    void tckRunsTheKit() {
        PrintStream saved = System.out;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        Cli r;
        try {
            System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
            r = Cli.run("tck", "--uri", redis.uri(), "--group", "Info");
        } finally {
            System.setOut(saved);
        }
        String out = buffer.toString(StandardCharsets.UTF_8);
        assertThat(r.exitCode()).as(out + r).isZero();
        assertThat(out).contains("Lockstep compatibility kit against redis://", "PASS", "PASSED:");
    }

    @Test
    @DisplayName("tck with an unknown group is a usage error naming the groups")
    void tckUnknownGroup() {
        PrintStream saved = System.out;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        Cli r;
        try {
            System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
            r = Cli.run("tck", "--uri", redis.uri(), "--group", "NoSuchGroup");
        } finally {
            System.setOut(saved);
        }
        assertThat(r.exitCode()).isEqualTo(LockCtl.USAGE);
        assertThat(buffer.toString(StandardCharsets.UTF_8)).contains("no group named 'NoSuchGroup'", "Expiry");
    }
}
