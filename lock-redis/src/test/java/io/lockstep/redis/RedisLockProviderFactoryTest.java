package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.StrengthTier;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

@DisplayName("redis:// URIs")
class RedisLockProviderFactoryTest {

    private static RedisServer redis;
    private static RedisServer secured;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        secured = RedisServer.startWith(
                List.of("--user", "default", "off", "--user", "locker", "on", ">s3cr:t@", "~*", "&*", "+@all"));
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
        if (secured != null) {
            secured.close();
        }
    }

    private static final LeaseOptions OPTIONS = LeaseOptions.of(Duration.ofSeconds(10));

    @Test
    @DisplayName("Locks.open finds lock-redis by the redis scheme through ServiceLoader")
    void serviceLoaderFindsRedis() {
        try (LockProvider locks = Locks.open(redis.uri())) {
            assertThat(locks.info().name()).isEqualTo("redis");
            assertThat(locks.info().tier()).isEqualTo(StrengthTier.BEST_EFFORT);
            assertThat(locks.tryAcquire("factory/plain", OPTIONS)).isPresent();
        }
    }

    @Test
    @DisplayName("the key prefix and database from the URI are where the lock is written")
    void prefixAndDatabaseAreUsed() {
        try (LockProvider locks = Locks.open(redis.uri() + "/3?keyPrefix=app1:")) {
            Lease lease = locks.acquire("orders/7", OPTIONS);
            try (Jedis db3 = new Jedis(redis.host(), redis.port())) {
                db3.select(3);
                assertThat(db3.get("app1:{orders/7}")).isEqualTo(lease.ownerToken());
                assertThat(db3.get("app1:{orders/7}:fence"))
                        .isEqualTo(Long.toString(lease.fencingToken().getAsLong()));
                assertThat(db3.pttl("app1:{orders/7}")).isBetween(1L, 10_000L);
            }
            lease.release();
        }
    }

    @Test
    @DisplayName("an ACL user and a percent-encoded password from the URI log in")
    void aclUserAndPassword() {
        String uri = "redis://locker:s3cr%3At%40@127.0.0.1:" + secured.port();
        try (LockProvider locks = Locks.open(uri)) {
            assertThat(locks.tryAcquire("acl", OPTIONS)).isPresent();
        }
    }

    @Test
    @DisplayName("a wrong password fails closed, names the server and never leaks the password")
    void wrongPasswordFailsClosed() {
        String uri = "redis://locker:wrong-secret@127.0.0.1:" + secured.port();
        try (LockProvider locks = Locks.open(uri)) {
            assertThatThrownBy(() -> locks.tryAcquire("acl", OPTIONS))
                    .isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("127.0.0.1:" + secured.port())
                    .hasMessageNotContaining("wrong-secret");
        }
    }

    @Test
    @DisplayName("bad URIs and settings are rejected naming the setting and value")
    void badSettingsAreRejected() {
        assertThatThrownBy(() -> Locks.open("redis:///nohost"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("host");
        assertThatThrownBy(() -> Locks.open("redis://localhost:6379/db1"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("database")
                .hasMessageContaining("db1");
        assertThatThrownBy(() -> Locks.open("redis://localhost:6379?timeout=soon"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("timeout")
                .hasMessageContaining("soon");
        assertThatThrownBy(() -> Locks.open("redis://localhost:6379?poolSize=1"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("poolSize must be between 2 and 1024, was 1");
        assertThatThrownBy(() -> Locks.open("redis://localhost:6379?keyPrefix=%7Bx%7D"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> Locks.open("redis://u:hunter2@localhost:6379?provider=nope"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("nope")
                .hasMessageNotContaining("hunter2");
    }

    @Test
    @DisplayName("an unknown scheme names the schemes Lockstep knows")
    void unknownScheme() {
        assertThatThrownBy(() -> Locks.open("memcached://localhost:11211"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("memcached")
                .hasMessageContaining("redis");
        assertThatThrownBy(() -> Locks.open("etcd://localhost:2379"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("io.lockstep:lock-etcd");
    }
}
