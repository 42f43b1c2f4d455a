package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * The lock scripts are loaded into the server before the first one runs, so neither a lease's first
 * acquire nor its first renewal pays a NOSCRIPT miss and an {@code EVAL}; a server that lost them
 * (here: {@code SCRIPT FLUSH}) misses once and then has them all again. Counted by the server's
 * {@code INFO commandstats} and {@code INFO errorstats}.
 */
@DisplayName("lock-redis: scripts are loaded up front")
class RedisScriptsPreloadedTest {

    private RedisServer server;
    private Jedis admin;
    private LockProvider provider;

    @BeforeEach
    void start() {
        server = RedisServer.start();
        admin = new Jedis(server.host(), server.port());
        provider = Locks.open(LockConfig.of(server.uri()));
    }

    @AfterEach
    void stop() {
        provider.close();
        admin.close();
        server.close();
    }

    @Test
    @DisplayName("acquire, renewals and release run by EVALSHA only: no EVAL, no NOSCRIPT error")
    void noScriptIsEverSentBySource() throws Exception {
        long before = calls("evalsha");
        Lease lease = provider.tryAcquire(
                        "preloaded", LeaseOptions.of(Duration.ofSeconds(2)).withAutoRenew())
                .orElseThrow();
        awaitCalls("evalsha", before + 3); // the acquire and at least two renewals
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.release()).isTrue();

        assertThat(calls("eval")).as("EVAL calls").isZero();
        assertThat(noScriptErrors()).as("NOSCRIPT errors").isZero();
        assertThat(calls("script|load") + calls("script"))
                .as("SCRIPT LOAD calls")
                .isPositive();
    }

    @Test
    @DisplayName("after SCRIPT FLUSH one call misses, then every script is back: the renewals that follow do not miss")
    void aServerThatLostTheScriptsMissesOnce() throws Exception {
        provider.tryAcquire("first", LeaseOptions.of(Duration.ofSeconds(30)))
                .orElseThrow()
                .release();
        admin.scriptFlush();

        long before = calls("evalsha");
        Lease lease = provider.tryAcquire(
                        "after-flush", LeaseOptions.of(Duration.ofSeconds(2)).withAutoRenew())
                .orElseThrow();
        awaitCalls("evalsha", before + 3); // the missed acquire and at least two renewals
        assertThat(lease.release()).isTrue();

        assertThat(noScriptErrors()).as("NOSCRIPT errors").isEqualTo(1);
        assertThat(calls("eval")).as("EVAL calls (the missed acquire only)").isEqualTo(1);
    }

    private void awaitCalls(String command, long atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (calls(command) < atLeast) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("the server counted " + calls(command) + " " + command
                        + " calls within 10 s, expected " + atLeast);
            }
            Thread.sleep(10);
        }
    }

    /** Calls of {@code command} (lower case, as {@code INFO commandstats} names it) the server counted. */
    private long calls(String command) {
        return stat(admin.info("commandstats"), "cmdstat_" + command + ":", "calls=");
    }

    private long noScriptErrors() {
        return stat(admin.info("errorstats"), "errorstat_NOSCRIPT:", "count=");
    }

    private static long stat(String info, String linePrefix, String field) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(linePrefix)) {
                String rest = line.substring(line.indexOf(field) + field.length());
                int end = rest.indexOf(',');
                return Long.parseLong(end < 0 ? rest.trim() : rest.substring(0, end));
            }
        }
        return 0;
    }
}
