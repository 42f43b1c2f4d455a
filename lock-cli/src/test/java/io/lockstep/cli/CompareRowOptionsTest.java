package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import redis.clients.jedis.Jedis;

/** {@code --backend 'redis?appendfsync=always'}: local rows take server options and lock-URI settings (item 7). */
@DisplayName("lockctl compare: options of local rows")
class CompareRowOptionsTest {

    @TempDir
    Path dir;

    @Test
    @DisplayName("a server option reaches the redis-server lockctl starts (appendonly yes, appendfsync always)")
    void aServerOptionReachesTheServer() {
        LocalRow row = LocalRow.parse("redis?appendfsync=always", BackendDescriptor.all());
        assertThat(row.label()).isEqualTo("redis?appendfsync=always");
        assertThat(row.uriSettings()).isEmpty();
        try (LocalBackend local = row.descriptor().starter().start(row.serverArgs());
                Jedis jedis = new Jedis(
                        local.faultTarget().host(), local.faultTarget().port())) {
            assertThat(jedis.configGet("appendfsync")).containsEntry("appendfsync", "always");
            assertThat(jedis.configGet("appendonly")).containsEntry("appendonly", "yes");
            assertThat(row.uri(local.uri())).isEqualTo(local.uri());
        }
    }

    @Test
    @DisplayName("two rows of one backend with different options run in one compare, each labelled with its options,"
            + " and a lock-URI setting reaches every client of its row")
    void twoRowsOfOneBackend() throws Exception {
        Path json = dir.resolve("run.json");
        // waitReplicas=1 on a server without replicas: WAIT never confirms, so no grant counts. That no client
        // of that row acquires shows the setting reached the URI its clients opened.
        Cli run = Cli.run(
                "compare",
                "--backend",
                "redis?appendfsync=always,redis?waitReplicas=1",
                "--faults",
                "none",
                "--duration",
                "2s",
                "--clients",
                "2",
                "--no-progress",
                "--json",
                json.toString());
        assertThat(run.exitCode()).as(run.toString()).isEqualTo(LockCtl.UNAVAILABLE);
        JsonNode rows = new ObjectMapper().readTree(json.toFile()).get("backends");
        assertThat(rows).hasSize(2);
        assertThat(rows.get(0).get("backend").asText()).isEqualTo("redis?appendfsync=always");
        assertThat(rows.get(0).get("acquisitions").asLong()).as(run.toString()).isPositive();
        assertThat(rows.get(1).get("backend").asText()).isEqualTo("redis?waitReplicas=1");
        assertThat(rows.get(1).get("started").asBoolean()).as(run.toString()).isFalse();
        assertThat(rows.get(1).get("unavailableReason").asText()).contains("no client acquired the lock");
        assertThat(run.out()).contains("redis?appendfsync=always |", "redis?waitReplicas=1 ");
    }

    @Test
    @DisplayName("a comma inside a row's options stays in the value; a comma before a backend's name starts a row")
    void aCommaInsideOptionsIsNotARowSeparator() {
        List<BackendDescriptor> catalogue = BackendDescriptor.all();
        assertThat(LocalRow.split(List.of("redis?keyPrefix=a,b,etcd"), catalogue))
                .containsExactly("redis?keyPrefix=a,b", "etcd");
        assertThat(LocalRow.split(List.of("redis?keyPrefix=x,1,2,redis?appendfsync=always,zookeeper"), catalogue))
                .containsExactly("redis?keyPrefix=x,1,2", "redis?appendfsync=always", "zookeeper");
        assertThat(LocalRow.split(List.of("redis,etcd", "redlock?keyPrefix=p,q"), catalogue))
                .containsExactly("redis", "etcd", "redlock?keyPrefix=p,q");
        // A name without options is never glued to the next piece: an unknown one is still reported.
        assertThat(LocalRow.split(List.of("redis,etcdd"), catalogue)).containsExactly("redis", "etcdd");
        LocalRow row = LocalRow.parse("redis?keyPrefix=a,b", catalogue);
        assertThat(row.uriSettings()).isEqualTo("keyPrefix=a,b");
        assertThat(row.label()).isEqualTo("redis?keyPrefix=a,b");
    }

    @Test
    @DisplayName("compare reads the comma inside a setting as part of it: one row per backend, labelled with the value")
    void compareKeepsTheCommaInTheSetting() {
        CompareCommand command = new CompareCommand();
        new CommandLine(command)
                .registerConverter(java.time.Duration.class, new DurationConverter())
                .parseArgs("--backend", "redis?keyPrefix=a,b,etcd");
        assertThat(command.backends).containsExactly("redis?keyPrefix=a,b,etcd");
        assertThat(LocalRow.split(command.backends, BackendDescriptor.all()).stream()
                        .map(spec ->
                                LocalRow.parse(spec, BackendDescriptor.all()).label()))
                .containsExactly("redis?keyPrefix=a,b", "etcd");
    }

    @Test
    @DisplayName("a lock-URI setting is checked by the backend's own factory: a bad value names the rule")
    void aBadUriSettingNamesTheRule() {
        IllegalArgumentException e = org.assertj.core.api.Assertions.catchThrowableOfType(
                () -> LocalRow.parse("redis-sentinel?waitReplicas=99", BackendDescriptor.all()),
                IllegalArgumentException.class);
        assertThat(e).hasMessageContaining("--backend 'redis-sentinel?waitReplicas=99'", "waitReplicas", "16", "99");
        LocalRow ok = LocalRow.parse("redis-sentinel?waitReplicas=1", BackendDescriptor.all());
        assertThat(ok.uriSettings()).isEqualTo("waitReplicas=1");
        assertThat(ok.uri("redis-sentinel://127.0.0.1:5/mymaster"))
                .isEqualTo("redis-sentinel://127.0.0.1:5/mymaster?waitReplicas=1");
    }

    @Test
    @DisplayName(
            "an unknown option, a bad value or a row that takes none is a one-line usage error before any server starts")
    void badOptionsAreRefusedBeforeAnythingStarts() {
        AtomicInteger starts = new AtomicInteger();
        BackendDescriptor counted = new BackendDescriptor(
                "redis",
                "BEST_EFFORT",
                args -> {
                    starts.incrementAndGet();
                    throw new IllegalStateException("must not start");
                },
                "",
                true,
                List.of(BackendDescriptor.APPENDFSYNC),
                "redis://127.0.0.1:1");
        BackendDescriptor plain = new BackendDescriptor(
                "etcd",
                "CONSENSUS",
                args -> {
                    starts.incrementAndGet();
                    throw new IllegalStateException("must not start");
                },
                "");
        List<BackendDescriptor> catalogue = List.of(counted, plain);

        Cli unknown = compare(catalogue, "redis?appendfsnyc=always");
        assertThat(unknown.exitCode()).as(unknown.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(unknown.err())
                .contains("--backend 'redis?appendfsnyc=always'", "unknown setting 'appendfsnyc'")
                .contains("server options: appendfsync");

        Cli value = compare(catalogue, "redis?appendfsync=sometimes");
        assertThat(value.exitCode()).as(value.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(value.err())
                .contains("--backend 'redis?appendfsync=sometimes'", "appendfsync='sometimes'")
                .contains("not one of always, everysec, no");

        Cli uriValue = compare(catalogue, "redis?timeout=soon");
        assertThat(uriValue.exitCode()).as(uriValue.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(uriValue.err()).contains("--backend 'redis?timeout=soon'", "timeout", "'soon'");

        Cli none = compare(catalogue, "etcd?sessionTtl=5s");
        assertThat(none.exitCode()).as(none.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(none.err()).contains("--backend 'etcd?sessionTtl=5s'", "take no lock-URI settings");

        Cli twice = compare(catalogue, "redis?appendfsync=no,redis?appendfsync=no");
        assertThat(twice.exitCode()).as(twice.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(twice.err()).contains("given twice");

        for (Cli r : List.of(unknown, value, uriValue, none, twice)) {
            assertThat(r.err().lines().count()).as(r.err()).isEqualTo(1);
            assertThat(r.out()).doesNotContain("backend |");
        }
        assertThat(starts).hasValue(0);
    }

    private static Cli compare(List<BackendDescriptor> catalogue, String backend) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = LockCtl.commandLine(new PrintWriter(out, true), new PrintWriter(err, true));
        CommandLine compare = new CommandLine(new CompareCommand(catalogue));
        compare.registerConverter(java.time.Duration.class, new DurationConverter());
        compare.setOut(new PrintWriter(out, true));
        compare.setErr(new PrintWriter(err, true));
        compare.setExecutionExceptionHandler(cl.getExecutionExceptionHandler());
        int code = compare.execute("--backend", backend, "--faults", "none", "--duration", "2s", "--no-progress");
        return new Cli(code, out.toString(), err.toString());
    }
}
