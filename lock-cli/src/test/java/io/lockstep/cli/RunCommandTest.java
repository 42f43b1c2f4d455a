package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.RedisServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("lockctl run: a command under the lock (finding 20)")
class RunCommandTest {

    static RedisServer redis;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        redis.close();
    }

    @Test
    @DisplayName("runs the command with the fence in LOCKSTEP_FENCE, passes its exit code through and releases")
    void passesTheExitCodeAndTheFence() throws Exception {
        String name = "lockctl/run/" + System.nanoTime();
        Path fence = dir.resolve("fence");
        Cli r = Cli.run(
                "run",
                name,
                "--uri",
                redis.uri(),
                "--",
                "sh",
                "-c",
                "printf %s \"$LOCKSTEP_FENCE\" > " + fence + "; exit 7");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(7);
        assertThat(Files.readString(fence, StandardCharsets.UTF_8)).matches("[1-9][0-9]*");
        Cli after = Cli.run("inspect", name, "--uri", redis.uri());
        assertThat(after.exitCode()).as("released: inspect says free").isEqualTo(LockCtl.OK);
    }

    @Test
    @DisplayName("does not run the command and exits 4 when someone else holds the lock for the whole wait")
    void heldElsewhere() throws Exception {
        String name = "lockctl/run/" + System.nanoTime();
        Path ran = dir.resolve("ran");
        try (LockProvider other = Locks.open(redis.uri());
                Lease lease = other.acquire(name, LeaseOptions.of(Duration.ofSeconds(30)))) {
            Cli r = Cli.run("run", name, "--uri", redis.uri(), "--wait", "500ms", "--", "touch", ran.toString());
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.HELD);
            assertThat(r.err())
                    .contains("still held by someone else after 500ms")
                    .doesNotContain("unexpected");
            assertThat(ran).doesNotExist();
            Cli inspect = Cli.run("inspect", name, "--uri", redis.uri(), "--json");
            assertThat(inspect.exitCode()).isEqualTo(LockCtl.HELD);
            assertThat(inspect.out())
                    .contains(
                            "\"held\":true", "\"fence\":" + lease.fencingToken().getAsLong());
        }
    }

    @Test
    @DisplayName("stops the command with SIGTERM the moment the lease is lost, and exits 1")
    void stopsTheCommandOnLoss() throws Exception {
        String name = "lockctl/run/" + System.nanoTime();
        Path started = dir.resolve("started");
        Path term = dir.resolve("term");
        String script =
                "trap 'echo TERM > " + term + "; exit 0' TERM; touch " + started + "; while true; do sleep 0.1; done";
        CompletableFuture<Cli> run = CompletableFuture.supplyAsync(() -> Cli.run(
                "run", name, "--uri", redis.uri(), "--lease", "1s", "--grace", "10s", "--", "sh", "-c", script));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(started) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(started).as("the command started under the lock").exists();
        // Another party deletes the lock (as FLUSHALL would): the holder's next renewal finds it gone.
        Process del = new ProcessBuilder(
                        "redis-cli", "-h", redis.host(), "-p", Integer.toString(redis.port()), "FLUSHALL")
                .redirectErrorStream(true)
                .start();
        assertThat(del.waitFor(30, TimeUnit.SECONDS)).isTrue();
        Cli r = run.get(60, TimeUnit.SECONDS);
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.INVARIANT_BROKEN);
        assertThat(r.err()).contains("lost '" + name + "'", "stopping it");
        assertThat(Files.readString(term, StandardCharsets.UTF_8)).contains("TERM");
    }
}
