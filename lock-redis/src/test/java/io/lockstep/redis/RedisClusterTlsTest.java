package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.RedisClusterSetup;
import io.lockstep.tck.servers.RedisTls;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("rediss-cluster:// (TLS on a 3+3 Redis Cluster)")
class RedisClusterTlsTest {

    private static final String PASSWORD = "tls-test-s3cret";

    private static RedisTls tls;
    private static RedisClusterSetup redis;

    @BeforeAll
    static void start() {
        tls = RedisTls.selfSigned();
        redis = RedisClusterSetup.startTls(tls);
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    @DisplayName("locks are taken, fenced and released over TLS with a trust store that holds the servers' CA")
    void locksWorkOverTls() {
        String uri = redis.uri() + "?timeout=2s&trustStore=" + tls.trustStore() + "&trustStorePassword="
                + RedisTls.TRUST_STORE_PASSWORD;
        assertThat(uri).startsWith("rediss-");
        try (LockProvider first = Locks.open(uri);
                LockProvider second = Locks.open(uri)) {
            Lease lease = first.tryAcquire("tls", LeaseOptions.of(Duration.ofSeconds(10)))
                    .orElseThrow();
            assertThat(second.tryAcquire("tls", LeaseOptions.of(Duration.ofSeconds(10))))
                    .isEmpty();
            assertThat(lease.release()).isTrue();
            Optional<Lease> next = second.tryAcquire("tls", LeaseOptions.of(Duration.ofSeconds(10)));
            assertThat(next).isPresent();
            assertThat(next.get().fencingToken().getAsLong())
                    .isGreaterThan(lease.fencingToken().getAsLong());
            assertThat(next.get().release()).isTrue();
        }
    }

    @Test
    @DisplayName("a trust store of another CA fails closed with a clear message that holds no password")
    void wrongCaFailsClosed() {
        RedisTls other = RedisTls.selfSigned();
        String uri = redis.uri().replace("://", "://:" + PASSWORD + "@") + "?timeout=1s&trustStore="
                + other.trustStore() + "&trustStorePassword=" + RedisTls.TRUST_STORE_PASSWORD;
        Throwable thrown = catchThrowable(() -> {
            try (LockProvider locks = Locks.open(uri)) {
                locks.tryAcquire("tls-wrong-ca", LeaseOptions.of(Duration.ofSeconds(5)));
            }
        });
        assertThat(thrown).isInstanceOf(LockException.class);
        assertThat(thrown.getMessage()).contains("127.0.0.1:").contains("TLS");
        assertThat(String.valueOf(thrown)).doesNotContain(PASSWORD);
        for (Throwable cause = thrown; cause != null; cause = cause.getCause()) {
            assertThat(String.valueOf(cause.getMessage())).doesNotContain(PASSWORD);
        }
    }
}
