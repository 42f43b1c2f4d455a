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
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;

@DisplayName("redis:// URIs")
class RedisLockProviderFactoryTest {

    private static RedisServer redis;
    private static RedisServer secured;
    private static RedisServer plusPassword;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        plusPassword = RedisServer.startWith(List.of("--requirepass", "ab+cd"));
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
        if (plusPassword != null) {
            plusPassword.close();
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
                assertThat(db3.get("app1:{orders/7}")).startsWith(lease.ownerToken() + " ");
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
    @DisplayName("user info is percent-decoded as RFC 3986 says: '+' is a plus sign, not a space")
    void plusInThePasswordIsLiteral() {
        for (String userInfo : List.of(":ab+cd", "ab+cd", ":ab%2Bcd", "default:ab+cd")) {
            String uri = "redis://" + userInfo + "@127.0.0.1:" + plusPassword.port() + "?timeout=1s";
            try (LockProvider locks = Locks.open(uri)) {
                assertThat(locks.tryAcquire("plus/" + userInfo, OPTIONS))
                        .as(userInfo)
                        .isPresent();
            }
        }
    }

    @Test
    @DisplayName("a host name with '_' (a registry-based authority, as Docker Compose names are) is accepted")
    void underscoreHostIsAccepted() {
        try (LockProvider locks = Locks.open("redis://app:pw@redis_primary:6390/2?timeout=200ms")) {
            assertThat(locks.toString()).contains("redis_primary:6390");
            assertThatThrownBy(() -> locks.tryAcquire("underscore", OPTIONS))
                    .isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("redis_primary:6390");
        }
    }

    @Test
    @DisplayName("an unknown setting is an error naming it, a near miss, and the known settings")
    void unknownSettingsAreRejected() {
        assertThatThrownBy(() -> Locks.open(redis.uri() + "?keyprefix=billing:"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("unknown setting 'keyprefix'")
                .hasMessageContaining("did you mean 'keyPrefix'")
                .hasMessageContaining("poolSize, provider, sentinelAuth, timeout");
        assertThatThrownBy(() -> Locks.open(redis.uri() + "?keyPrefix=billing:&pool_size=64"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("'pool_size'")
                .hasMessageContaining("did you mean 'poolSize'");
        assertThatThrownBy(() -> Locks.open(redis.uri() + "?nodeTimeout=1s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("unknown setting 'nodeTimeout'");
    }

    @Test
    @DisplayName("the validity reported is the TTL less the clock drift allowance (TTL x driftFactor + 2 ms)")
    void validityLeavesTheDriftAllowance() {
        Duration ttl = Duration.ofSeconds(10);
        try (LockProvider locks = Locks.open(redis.uri())) {
            Lease lease = locks.acquire("drift/default", LeaseOptions.of(ttl));
            // 10 s x 0.01 + 2 ms = 102 ms
            assertThat(lease.remaining())
                    .isLessThanOrEqualTo(ttl.minusMillis(102))
                    .isGreaterThan(Duration.ZERO);
            assertThat(lease.extend(ttl)).isTrue();
            assertThat(lease.remaining()).isLessThanOrEqualTo(ttl.minusMillis(102));
            lease.release();
        }
        try (LockProvider locks = Locks.open(redis.uri() + "?driftFactor=0.1")) {
            Lease lease = locks.acquire("drift/tenth", LeaseOptions.of(ttl));
            assertThat(lease.remaining()).isLessThanOrEqualTo(ttl.minusMillis(1_002));
            try (Jedis jedis = new Jedis(redis.host(), redis.port())) {
                assertThat(jedis.pttl("lockstep:{drift/tenth}"))
                        .as("the server still gets the whole TTL")
                        .isGreaterThan(ttl.minusMillis(1_002).toMillis());
            }
            lease.release();
        }
        try (LockProvider locks = Locks.open(redis.uri() + "?driftFactor=0")) {
            Lease lease = locks.acquire("drift/zero", LeaseOptions.of(ttl));
            assertThat(lease.remaining()).isLessThanOrEqualTo(ttl.minusMillis(2));
            lease.release();
        }
    }

    @Test
    @DisplayName("a lease no longer than the drift allowance is refused, naming the allowance")
    void leaseShorterThanTheAllowanceIsRefused() {
        try (LockProvider locks = Locks.open(redis.uri())) {
            assertThatThrownBy(() -> locks.tryAcquire("drift/short", LeaseOptions.of(Duration.ofMillis(2))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("drift allowance");
            // 3 ms passes the check (0.97 ms of validity). Whether it is handed out depends on the round
            // trip: lock-api gives back a grant that arrives with less than 1 ms left rather than hand out a
            // lease that is already over, so both outcomes are right; a refusal of the argument is not.
            try {
                Optional<Lease> lease = locks.tryAcquire("drift/short", LeaseOptions.of(Duration.ofMillis(3)));
                assertThat(lease).as("a free lock").isPresent();
            } catch (BackendUnavailableException spent) {
                assertThat(spent).hasMessageContaining("granted with no validity left");
            }
        }
        assertThatThrownBy(() -> Locks.open(redis.uri() + "?driftFactor=0.5"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("driftFactor must be in [0, 0.5), was 0.5");
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
    @DisplayName("the oldest waiter's inbox wait: 500 ms, or half the socket timeout if shorter; none in a pool"
            + " under 4 connections")
    void inboxWaitFollowsTimeoutAndPool() {
        assertThat(RedisLockProviderFactory.inboxWait(Duration.ofSeconds(2), 16))
                .isEqualTo(Duration.ofMillis(500));
        assertThat(RedisLockProviderFactory.inboxWait(Duration.ofMillis(300), 16))
                .isEqualTo(Duration.ofMillis(150));
        assertThat(RedisLockProviderFactory.inboxWait(Duration.ofSeconds(2), 4)).isEqualTo(Duration.ofMillis(500));
        assertThat(RedisLockProviderFactory.inboxWait(Duration.ofSeconds(2), 3)).isZero();
        assertThat(RedisLockProviderFactory.inboxWait(Duration.ofMillis(19), 16))
                .as("half of a 19 ms timeout is under the 10 ms minimum")
                .isZero();
        assertThat(RedisLockProviderFactory.inboxWait(Duration.ofMillis(20), 16))
                .isEqualTo(Duration.ofMillis(10));
    }

    @Test
    @DisplayName("the builder refuses an inbox wait other than zero outside 10 ms to a minute, naming it and the value")
    void badInboxWaitIsRejected() {
        try (JedisPooled jedis = new JedisPooled(redis.host(), redis.port())) {
            assertThatThrownBy(() -> RedisLockProvider.builder(jedis).inboxWait(Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("inboxWait must be 0 (off) or between 10 ms and 1 minute, was PT-0.001S");
            assertThatThrownBy(() -> RedisLockProvider.builder(jedis).inboxWait(Duration.ofMillis(9)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("inboxWait must be 0 (off) or between 10 ms and 1 minute, was PT0.009S");
            assertThatThrownBy(() -> RedisLockProvider.builder(jedis).inboxWait(Duration.ofMinutes(2)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("inboxWait must be 0 (off) or between 10 ms and 1 minute, was PT2M");
            assertThat(RedisLockProvider.builder(jedis).inboxWait(Duration.ZERO))
                    .isNotNull();
            assertThat(RedisLockProvider.builder(jedis).inboxWait(Duration.ofMillis(10)))
                    .isNotNull();
            assertThatThrownBy(() -> RedisLockProvider.builder(jedis).inboxWait(null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("inboxWait");
        }
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
