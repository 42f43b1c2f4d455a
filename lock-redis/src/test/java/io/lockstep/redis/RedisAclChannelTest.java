package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LogCapture;
import io.lockstep.tck.Timing;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Redis 7 gives a new ACL user no channel at all ({@code acl-pubsub-default resetchannels}), so a user
 * made with {@code ACL SETUSER app on >pw ~* +@all} may lock but may neither publish nor subscribe.
 */
@DisplayName("a Redis 7 ACL user without channel permission")
class RedisAclChannelTest {

    private static final Timing TIMING = Timing.fromSystemProperty();
    private static RedisServer redis;
    private static String uri;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        try (Jedis admin = new Jedis(redis.host(), redis.port())) {
            admin.aclSetUser("app", "on", ">pw", "~*", "+@all");
            assertThat(admin.aclGetUser("app").getChannels())
                    .as("Redis 7 default: no channels")
                    .isEmpty();
        }
        uri = "redis://app:pw@127.0.0.1:" + redis.port() + "?timeout=1s";
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    @DisplayName("release() of a held lock deletes it and returns true, never an error after the delete")
    void releaseIsNotAnErrorAfterTheDelete() {
        try (LockProvider locks = Locks.open(uri);
                Jedis admin = new Jedis(redis.host(), redis.port())) {
            Lease lease = locks.acquire("acl/job", LeaseOptions.of(Duration.ofSeconds(30)));
            assertThat(admin.exists("lockstep:{acl/job}")).isTrue();
            lease.release();
            assertThat(admin.exists("lockstep:{acl/job}")).isFalse();
        }
    }

    @Test
    @DisplayName("waiting acquires of free locks never stall on the refused subscription, and it is logged once")
    void waitingAcquiresDoNotStall() {
        try (LogCapture log = new LogCapture();
                LockProvider locks = Locks.open(uri)) {
            for (int i = 0; i < 5; i++) {
                long start = System.nanoTime();
                Optional<Lease> lease = locks.tryAcquire(
                        "acl/free-" + i, LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofMillis(100)));
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                assertThat(lease).as("free lock %d", i).isPresent();
                assertThat(took).as("acquire %d of a free lock", i).isLessThan(TIMING.millis(1_000));
                lease.get().release();
            }
            String text = log.text();
            assertThat(text.split("Release notifications on Redis at 127.0.0.1:" + redis.port(), -1))
                    .as("one warning in:%n%s", text)
                    .hasSize(2);
            assertThat(text).contains("&lockstep:released");
        }
    }

    @Test
    @DisplayName("a waiter still gets the lock after the holder releases it, by polling")
    void waiterGetsTheLockByPolling() throws Exception {
        try (LockProvider holderSide = Locks.open(uri);
                LockProvider waiterSide = Locks.open(uri)) {
            Lease held = holderSide.acquire("acl/handoff", LeaseOptions.of(Duration.ofSeconds(60)));
            CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> waiterSide.acquire(
                    "acl/handoff", LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(20))));
            TimeUnit.MILLISECONDS.sleep(300); // let the waiter start waiting: it must poll, not hear
            long released = System.nanoTime();
            assertThat(held.release()).isTrue();
            Lease next = waiter.get(TIMING.millis(10_000).toMillis(), TimeUnit.MILLISECONDS);
            // Polling runs at most every second (the holder's TTL here is a minute).
            assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(TIMING.millis(3_000));
            assertThat(next.fencingToken().getAsLong())
                    .isGreaterThan(held.fencingToken().getAsLong());
            next.release();
        }
    }

    @Test
    @DisplayName("a user refused BLPOP: the oldest waiter's inbox is turned off and its grant comes by the notice")
    void aUserWithoutBlpopTakesGrantsFromNotices() throws Exception {
        try (Jedis admin = new Jedis(redis.host(), redis.port())) {
            admin.aclSetUser("app3", "on", ">pw", "~*", "&lockstep:released", "+@all", "-blpop");
        }
        String refused = "redis://app3:pw@127.0.0.1:" + redis.port() + "?timeout=1s";
        try (LockProvider holderSide = Locks.open(refused);
                LockProvider waiterSide = Locks.open(refused);
                Jedis admin = new Jedis(redis.host(), redis.port())) {
            Lease held = holderSide.acquire("acl/no-blpop", LeaseOptions.of(Duration.ofSeconds(60)));
            long rejectedBefore = rejectedBlpops(admin);
            CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> waiterSide.acquire(
                    "acl/no-blpop", LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(60))));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (rejectedBlpops(admin) == rejectedBefore) {
                assertThat(System.nanoTime() - deadline)
                        .as("the waiter's BLPOP, refused within 30 s")
                        .isNegative();
                TimeUnit.MILLISECONDS.sleep(5);
            }
            // The refused waiter's next refresh tells the server it no longer blocks on its inbox, so that
            // its grant is announced.
            // (An entry is "<lane flag><lease ms> <value>".)
            while (!admin.keys("lockstep:{acl/no-blpop}:waiter:*").stream()
                    .map(admin::get)
                    .allMatch(entry -> entry == null || entry.startsWith("0"))) {
                assertThat(System.nanoTime() - deadline)
                        .as("the waiter's entry marked as waiting for notices within 30 s")
                        .isNegative();
                TimeUnit.MILLISECONDS.sleep(5);
            }
            assertThat(admin.keys("lockstep:{acl/no-blpop}:waiter:*"))
                    .as("the waiter's entry")
                    .hasSize(1);
            long noticesBefore = publishCalls(admin);
            assertThat(held.release()).isTrue();
            assertThat(publishCalls(admin) - noticesBefore)
                    .as("the grant announced")
                    .isEqualTo(1);
            Lease next = waiter.get(60, TimeUnit.SECONDS);
            assertThat(next.fencingToken().getAsLong())
                    .isEqualTo(held.fencingToken().getAsLong() + 1);
            assertThat(rejectedBlpops(admin) - rejectedBefore)
                    .as("BLPOPs refused: the first, then the inbox is off for this provider")
                    .isEqualTo(1);
            assertThat(next.release()).isTrue();
        }
    }

    /** The server's count of PUBLISH calls (by clients or scripts). */
    private static long publishCalls(Jedis admin) {
        return commandStat(admin, "publish", "calls");
    }

    /** The server's count of BLPOP calls the ACL refused. */
    private static long rejectedBlpops(Jedis admin) {
        return commandStat(admin, "blpop", "rejected_calls");
    }

    /** One counter of {@code command} in {@code INFO commandstats} (0 before its first call). */
    private static long commandStat(Jedis admin, String command, String counter) {
        for (String line : admin.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
                    if (field.startsWith(counter + "=")) {
                        return Long.parseLong(field.substring(counter.length() + 1));
                    }
                }
            }
        }
        return 0;
    }

    @Test
    @DisplayName("with the channel granted (&<prefix>released) the same user is notified")
    void grantedChannelWorks() {
        try (Jedis admin = new Jedis(redis.host(), redis.port())) {
            admin.aclSetUser("app2", "on", ">pw", "~*", "&lockstep:released", "+@all");
        }
        try (LogCapture log = new LogCapture();
                LockProvider locks = Locks.open("redis://app2:pw@127.0.0.1:" + redis.port() + "?timeout=1s")) {
            Lease lease = locks.acquire("acl/granted", LeaseOptions.of(Duration.ofSeconds(30)));
            Optional<Lease> none = locks.tryAcquire(
                    "acl/granted", LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofMillis(200)));
            assertThat(none).isEmpty();
            assertThat(lease.release()).isTrue();
            assertThat(log.text()).doesNotContain("Release notifications on Redis at 127.0.0.1:" + redis.port());
        }
    }
}
