package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockstep.Holder;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("lockctl acquire and inspect on a local Redis")
class AcquireInspectTest {

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
    @DisplayName("inspect sees the lock acquire holds, with its fence and TTL, and sees it free after the release")
    void inspectSeesWhatAcquireHolds() throws Exception {
        String name = "lockctl/test/" + System.nanoTime();
        CompletableFuture<Cli> holder = CompletableFuture.supplyAsync(() ->
                Cli.run("acquire", name, "--uri", redis.uri(), "--hold", "3s", "--lease", "2s", "--every", "500ms"));
        // Poll until inspect sees it held (bounded), rather than sleeping a guess.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Cli held;
        do {
            held = Cli.run("inspect", name, "--uri", redis.uri());
        } while (!held.out().contains("held") && System.nanoTime() < deadline);
        assertThat(held.exitCode()).as(held.toString()).isEqualTo(LockCtl.HELD);
        Matcher m =
                Pattern.compile("held, fence (\\d+), remaining TTL (\\d+) ms").matcher(held.out());
        assertThat(m.find()).as(held.toString()).isTrue();
        assertThat(Long.parseLong(m.group(2))).isBetween(1L, 2000L);

        Cli acquired = holder.get(20, TimeUnit.SECONDS);
        assertThat(acquired.exitCode()).as(acquired.toString()).isZero();
        assertThat(acquired.out())
                .contains("acquired '" + name + "' on redis: fence " + m.group(1))
                .contains("holding '" + name + "'")
                .contains("released '" + name + "'");

        Cli free = Cli.run("inspect", name, "--uri", redis.uri());
        assertThat(free.out()).contains("'" + name + "': free, last fence " + m.group(1));
        assertThat(free.exitCode()).isEqualTo(LockCtl.OK);
    }

    @Test
    @DisplayName("inspect names the holder's host, pid and label, in the line and in --json; free has no holder")
    void inspectNamesTheHolder() throws Exception {
        String name = "lockctl/test/holder/" + System.nanoTime();
        Holder me = Holder.thisProcess("nightly-report");
        try (LockProvider other = Locks.open(redis.uri());
                Lease held = other.acquire(
                        name, LeaseOptions.of(Duration.ofSeconds(30)).withLabel("nightly-report"))) {
            Cli text = Cli.run("inspect", name, "--uri", redis.uri());
            assertThat(text.exitCode()).as(text.toString()).isEqualTo(LockCtl.HELD);
            assertThat(text.out())
                    .contains(
                            "'" + name + "': held, fence " + held.fencingToken().getAsLong() + ", remaining TTL ")
                    .contains(", holder host " + me.host() + " pid " + me.pid() + " label nightly-report")
                    .doesNotContain(held.ownerToken());

            Cli json = Cli.run("inspect", name, "--uri", redis.uri(), "--json");
            assertThat(json.exitCode()).as(json.toString()).isEqualTo(LockCtl.HELD);
            JsonNode o = new ObjectMapper().readTree(json.out());
            assertThat(o.get("held").asBoolean()).isTrue();
            assertThat(o.get("fence").asLong()).isEqualTo(held.fencingToken().getAsLong());
            assertThat(o.get("holder").get("host").asText()).isEqualTo(me.host());
            assertThat(o.get("holder").get("pid").asLong()).isEqualTo(me.pid());
            assertThat(o.get("holder").get("label").asText()).isEqualTo("nightly-report");
        }
        Cli free = Cli.run("inspect", name, "--uri", redis.uri(), "--json");
        assertThat(free.exitCode()).as(free.toString()).isEqualTo(LockCtl.OK);
        assertThat(new ObjectMapper().readTree(free.out()).get("holder").isNull())
                .isTrue();
    }

    @Test
    @DisplayName("acquire --label puts the label on the lock, and inspect shows it with lockctl's own pid")
    void acquireLabelIsShown() throws Exception {
        String name = "lockctl/test/label/" + System.nanoTime();
        CompletableFuture<Cli> holder = CompletableFuture.supplyAsync(() -> Cli.run(
                "acquire", name, "--uri", redis.uri(), "--hold", "3s", "--lease", "2s", "--label", "cron@web-3"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Cli held;
        do {
            held = Cli.run("inspect", name, "--uri", redis.uri());
        } while (!held.out().contains("held") && System.nanoTime() < deadline);
        assertThat(held.out())
                .as(held.toString())
                .contains("pid " + ProcessHandle.current().pid() + " label cron@web-3");
        assertThat(holder.get(20, TimeUnit.SECONDS).exitCode()).isZero();
    }

    @Test
    @DisplayName("a bad --label is a usage error naming the option and the rule, and nothing is taken")
    void aBadLabelIsAUsageError() {
        String name = "lockctl/test/bad-label/" + System.nanoTime();
        Cli r = Cli.run("acquire", name, "--uri", redis.uri(), "--hold", "1s", "--label", "two words");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(r.err()).contains("--label: label 'two words' has ' ' at index 3", "ASCII letters, digits");
        Cli run = Cli.run("run", name, "--uri", redis.uri(), "--label", "x{y}", "--", "true");
        assertThat(run.exitCode()).as(run.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(run.err()).contains("--label: label 'x{y}' has '{' at index 1");
        assertThat(Cli.run("inspect", name, "--uri", redis.uri()).exitCode()).isEqualTo(LockCtl.OK);
    }

    @Test
    @DisplayName("acquire that waits out a lock someone else holds exits 4 with one line, not 1 (finding 3)")
    void aBusyLockIsItsOwnExitCode() throws Exception {
        String name = "lockctl/test/" + System.nanoTime();
        try (LockProvider other = Locks.open(redis.uri());
                Lease held = other.acquire(name, LeaseOptions.of(Duration.ofSeconds(30)))) {
            Cli r = Cli.run("acquire", name, "--uri", redis.uri(), "--wait", "2s", "--hold", "1s");
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.HELD);
            assertThat(r.err())
                    .contains("'" + name + "' is still held by someone else after 2s")
                    .doesNotContain("unexpected", "PT2S");
        }
    }
}
