package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

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
