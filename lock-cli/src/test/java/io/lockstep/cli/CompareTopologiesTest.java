package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Short compare runs of the rows whose server faults are not a single server's: Redis Sentinel (the kill is
 * a failover) and a 3-member etcd cluster (the kill hits the leader, which is restarted). Each checks the
 * JSON: the history checker's result, the fault as it happened, and the measured recovery.
 */
@DisplayName("lockctl compare on Redis Sentinel and a 3-node etcd cluster")
class CompareTopologiesTest {

    @TempDir
    Path dir;

    private JsonNode compare(String... extra) throws Exception {
        Path jsonFile = dir.resolve("run.json");
        String[] base = {
            "compare",
            "--clients",
            "3",
            "--lease",
            "1s",
            "--fault-length",
            "1500ms",
            "--faults",
            "server-kill",
            "--seed",
            "7",
            "--no-progress",
            "--json",
            jsonFile.toString()
        };
        String[] args = new String[base.length + extra.length];
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(extra, 0, args, base.length, extra.length);
        Cli run = Cli.run(args);
        assertThat(run.exitCode()).as(run.toString()).isEqualTo(LockCtl.OK);
        JsonNode backend =
                new ObjectMapper().readTree(jsonFile.toFile()).get("backends").get(0);
        assertThat(backend.get("started").asBoolean()).as(run.toString()).isTrue();
        assertThat(backend.get("acquisitions").asLong()).as(run.toString()).isPositive();
        return backend;
    }

    @Test
    @DisplayName("redis-sentinel: SIGKILL of the primary is a failover; the row reports what the checker found")
    void sentinelFailover() throws Exception {
        JsonNode row = compare("--backend", "redis-sentinel");
        assertThat(row.get("tier").asText()).isEqualTo("BEST_EFFORT");
        JsonNode fault = row.get("faults").get(0);
        assertThat(fault.get("kind").asText()).isEqualTo("server-kill");
        assertThat(fault.get("label").asText()).isEqualTo("failover");
        assertThat(fault.get("note").asText()).contains("killed the primary", "the sentinels promoted");
        assertThat(fault.get("recoveryMs").isNumber()).as(row.toString()).isTrue();
        // Measured from the kill: the clients held the lock again on the promoted replica.
        assertThat(fault.get("recoveryMs").asDouble()).isPositive();
        // BEST_EFFORT does not claim to survive a failover: second holders and non-increasing fences are
        // reported, consistently with the checker's violations, and do not fail the run.
        long found = row.get("overlappingHolds").asLong()
                + row.get("fencesNotIncreasing").asLong()
                + row.get("staleWritesAccepted").asLong();
        assertThat(row.get("violations").size() > 0).isEqualTo(found > 0);
        assertThat(row.get("invariantBroken").asBoolean()).isFalse();
    }

    @Test
    @DisplayName("etcd --clustered: the leader is killed and restarted; no overlap, no stale write, recovery measured")
    void etcdLeaderKill() throws Exception {
        JsonNode row = compare("--clustered", "--backend", "etcd");
        assertThat(row.get("backend").asText()).isEqualTo("etcd-3");
        assertThat(row.get("uri").asText().split(",")).hasSize(3);
        JsonNode fault = row.get("faults").get(0);
        assertThat(fault.get("label").asText()).isEqualTo("leader-kill");
        assertThat(fault.get("note").asText()).contains("killed the leader", "restarted");
        assertThat(fault.get("recoveryMs").isNumber()).as(row.toString()).isTrue();
        assertThat(row.get("overlappingHolds").asLong()).isZero();
        assertThat(row.get("staleWritesAccepted").asLong()).isZero();
        assertThat(row.get("violations").size()).as(row.toString()).isZero();
        assertThat(row.get("invariantBroken").asBoolean()).isFalse();
    }
}
