package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.MonotonicClock;
import io.lockstep.redis.internal.RedisBackend;
import io.lockstep.redis.internal.RedisKeys;
import io.lockstep.redis.internal.RedisTopology;
import io.lockstep.redis.internal.ReplicaAck;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.AttemptContext;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.ReleaseWatch;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;

/**
 * The queue's scripts take a waiter's entry with {@code GETDEL} (Redis 6.2) and check a refreshing
 * waiter's place with {@code LPOS} (Redis 6.0.6). On a server without them (here both renamed away, as
 * an older server lacks them) a grant takes the entry with {@code GET} and {@code DEL}, and a refresh
 * takes the waiter at its word that it is listed.
 */
@DisplayName("lock-redis on a server without GETDEL and LPOS")
class RedisOlderServerTest {

    private static final String PREFIX = "lockstep:";
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static RedisServer redis;
    private static Jedis admin;
    private final RedisKeys keys = new RedisKeys(PREFIX);

    @BeforeAll
    static void start() {
        redis = RedisServer.startWith(List.of("--rename-command", "GETDEL", "", "--rename-command", "LPOS", ""));
        admin = new Jedis(redis.host(), redis.port());
    }

    @AfterAll
    static void stop() {
        admin.close();
        redis.close();
    }

    @Test
    @DisplayName("a queued waiter refreshes without being listed twice, and the release grants it, its entry gone")
    void aGrantWithoutGetdel() throws Exception {
        assertThatThrownBy(() -> admin.sendCommand(Protocol.Command.GETDEL, "any"))
                .as("the server's GETDEL")
                .hasMessageContaining("unknown command");
        assertThatThrownBy(() -> admin.sendCommand(Protocol.Command.LPOS, "any", "x"))
                .as("the server's LPOS")
                .hasMessageContaining("unknown command");
        try (RedisBackend backend = new RedisBackend(
                RedisTopology.direct(new JedisPooled(redis.host(), redis.port()), true),
                ReplicaAck.NONE,
                PREFIX,
                ClockDrift.DEFAULT_FACTOR,
                redis.host() + ":" + redis.port(),
                MonotonicClock.SYSTEM)) {
            String name = "older/" + System.nanoTime();
            Attempt<RedisBackend.Handle> held = backend.tryLock(new AttemptContext(name, "holder-token", LEASE));
            assertThat(held.isGranted()).isTrue();
            AttemptContext waiter = new AttemptContext(name, "waiter-token", LEASE);
            String hash = RedisHandoffTest.tokenHash(waiter);
            try (ReleaseWatch watch = backend.watch(name, waiter.ownerToken())) {
                assertThat(backend.tryLock(waiter).isGranted())
                        .as("the waiter's first attempt")
                        .isFalse();
                assertThat(backend.tryLock(waiter).isGranted())
                        .as("its refresh")
                        .isFalse();
                assertThat(admin.lrange(keys.waitListKey(name), 0, -1))
                        .as("the list after the refresh")
                        .containsExactly(hash);

                assertThat(backend.release(held.grant().handle())).isTrue();
                assertThat(admin.get(keys.lockKey(name))).startsWith(waiter.ownerToken() + " ");
                assertThat(admin.exists(keys.waiterKey(name, hash)))
                        .as("the granted waiter's entry")
                        .isFalse();
                assertThat(admin.exists(keys.waitListKey(name))).as("the list").isFalse();
                Attempt<RedisBackend.Handle> granted = backend.tryLock(waiter);
                assertThat(granted.isGranted()).isTrue();
                assertThat(granted.grant().fencingToken().getAsLong())
                        .isEqualTo(held.grant().fencingToken().getAsLong() + 1);
                assertThat(backend.release(granted.grant().handle())).isTrue();
            }
            assertThat(admin.exists(keys.lockKey(name)))
                    .as("the lock after the last release")
                    .isFalse();
        }
    }
}
