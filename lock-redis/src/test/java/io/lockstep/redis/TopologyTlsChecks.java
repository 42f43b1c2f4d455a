package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.RedisTls;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * What every TLS topology must show (Sentinel, Cluster): locks work over TLS with a trust store that holds
 * the servers' CA, and a trust store of another CA fails closed without a password in any message. A
 * subclass starts its topology with {@link RedisTls} once for the class.
 */
abstract class TopologyTlsChecks {

    private static final String PASSWORD = "tls-test-s3cret";

    /** The topology's {@code rediss-…://} URI, without a query. */
    abstract String uri();

    /** The certificate the topology's servers present. */
    abstract RedisTls tls();

    @Test
    @DisplayName("locks are taken, fenced and released over TLS with a trust store that holds the servers' CA")
    void locksWorkOverTls() {
        String uri = uri() + "?timeout=2s&trustStore=" + tls().trustStore() + "&trustStorePassword="
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
        String uri = uri().replace("://", "://:" + PASSWORD + "@") + "?timeout=1s&trustStore=" + other.trustStore()
                + "&trustStorePassword=" + RedisTls.TRUST_STORE_PASSWORD;
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
