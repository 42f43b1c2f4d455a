package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Short compare runs with the clock fault alone: on PostgreSQL, which libfaketime reaches, the server is
 * restarted on a clock 50% fast; on redis-server, which it cannot reach, a holder JVM's clock is slowed as
 * much. Each checks the JSON: the fault as it happened, what the fenced register did, and that an overlap
 * beyond every declared drift is reported without failing the run.
 */
@DisplayName("lockctl compare --faults clock, on the server's clock and on the holder's")
class CompareClockTest {

    @TempDir
    Path dir;

    private JsonNode compare(String backend) throws Exception {
        Path jsonFile = dir.resolve("run.json");
        Cli run = Cli.run(
                "compare",
                "--backend",
                backend,
                "--clients",
                "3",
                "--lease",
                "1s",
                "--faults",
                "clock",
                "--seed",
                "7",
                "--no-progress",
                "--json",
                jsonFile.toString());
        assertThat(run.exitCode()).as(run.toString()).isEqualTo(LockCtl.OK);
        JsonNode row =
                new ObjectMapper().readTree(jsonFile.toFile()).get("backends").get(0);
        assertThat(row.get("started").asBoolean()).as(run.toString()).isTrue();
        assertThat(row.get("acquisitions").asLong()).as(run.toString()).isPositive();
        JsonNode fault = row.get("faults").get(0);
        assertThat(fault.get("kind").asText()).isEqualTo("clock");
        assertThat(fault.get("recovery").asText()).as(row.toString()).isEmpty();
        // The holder wrote with its fence after a worker may have taken the lock: whatever the windows did,
        // the register never accepted a stale write, and an overlap is counted, not a broken run.
        assertThat(fault.get("note").asText()).as(row.toString()).contains("it wrote at 90% of");
        assertThat(row.get("staleWritesAccepted").asLong()).as(row.toString()).isZero();
        assertThat(row.get("violations").size() > 0)
                .isEqualTo(row.get("overlappingHolds").asLong()
                                + row.get("fencesNotIncreasing").asLong()
                        > 0);
        assertThat(row.get("invariantBroken").asBoolean()).as(row.toString()).isFalse();
        return fault;
    }

    @Test
    @DisplayName("jdbc: PostgreSQL restarts on a clock 50% fast and back; the holder on the real clock is fenced off")
    void postgresServerClock() throws Exception {
        JsonNode fault = compare("jdbc");
        assertThat(fault.get("note").asText()).contains("restarted the server on a clock 50% fast");
    }

    @Test
    @DisplayName("redis: libfaketime cannot reach redis-server, so a holder JVM's clock runs slow instead")
    void redisHolderClock() throws Exception {
        JsonNode fault = compare("redis");
        assertThat(fault.get("note").asText())
                .contains("a holder JVM on a clock rate x0.6667", "libfaketime cannot reach this server");
    }
}
