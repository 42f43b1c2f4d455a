package io.lockstep.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.Client;
import io.lockstep.ClockAssumption;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.spi.ClockDrift;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The keep-alive cap's clock drift allowance: etcd counts a session lease's TTL on the leader's clock, which
 * may run fast, so the client counts the session kept for {@code TTL − (TTL × driftFactor + 2 ms)} after the
 * grant or keep-alive was sent, caps every lease's validity by that, and declares {@code
 * rateDrift(driftFactor)}. Checked on a real etcd by comparing {@code remaining()} with what the arithmetic
 * and the time since before the call allow: no timing windows. The lower bounds take that time twice: the
 * backend counts a first grant from after its session's grant, the runtime from before both.
 */
@DisplayName("lock-etcd: the keep-alive cap leaves a clock drift allowance")
class EtcdDriftAllowanceTest {

    /**
     * A wait on a free lock, so that a grant which misses the 2 s deadline on a busy machine is tried again
     * rather than failing the test; the bounds below allow for the time any retries took.
     */
    private static final Duration RETRIES = Duration.ofSeconds(30);

    @RegisterExtension
    static final SoloEtcd ETCD = new SoloEtcd();

    @Test
    @DisplayName(
            "with the default 1% a 30 s lease is valid for all of its 30 s: the cap (45 s less 452 ms) is" + " further")
    void defaultAllowanceLeavesTheLeaseTime() {
        Duration leaseTime = Duration.ofSeconds(30);
        try (LockProvider locks = Locks.open(ETCD.server().uri() + "?keyPrefix=drift-default/")) {
            assertThat(locks.info().clock()).isEqualTo(ClockAssumption.rateDrift(0.01));
            assertThat(ClockDrift.validity(Duration.ofSeconds(45), 0.01)).isEqualTo(Duration.ofMillis(44_548));
            long before = System.nanoTime();
            Lease lease = locks.acquire("t", LeaseOptions.of(leaseTime).withWaitTime(RETRIES));
            Duration left = lease.remaining();
            Duration spent = Duration.ofNanos(System.nanoTime() - before);
            assertThat(left)
                    .isLessThanOrEqualTo(leaseTime)
                    .isGreaterThanOrEqualTo(leaseTime.minus(spent.multipliedBy(2)));
            lease.release();
        }
    }

    @Test
    @DisplayName("a grant on a new session is capped at the session TTL less the allowance from the grant's send"
            + " (driftFactor 0.49, 2 s lease: 3 s session, cap 1,528 ms)")
    void grantIsCappedByTheSessionLessTheAllowance() {
        Duration leaseTime = Duration.ofSeconds(2);
        // The session of 2 s leases has a TTL of ceil(1.5 x 2 s) = 3 s; with 0.49 the client counts it kept
        // for 3 s - (1,470 ms + 2 ms) = 1,528 ms after its grant was sent, which is before the lock's request.
        Duration cap = ClockDrift.validity(Duration.ofSeconds(3), 0.49);
        assertThat(cap).isEqualTo(Duration.ofMillis(1_528));
        try (LockProvider locks = Locks.open(ETCD.server().uri() + "?keyPrefix=drift-cap/&driftFactor=0.49")) {
            assertThat(locks.info().clock()).isEqualTo(ClockAssumption.rateDrift(0.49));
            long before = System.nanoTime();
            Lease lease = locks.acquire("t", LeaseOptions.of(leaseTime).withWaitTime(RETRIES));
            Duration left = lease.remaining();
            Duration spent = Duration.ofNanos(System.nanoTime() - before);
            assertThat(left)
                    .as("validity of the first grant: the cap, not the lease time")
                    .isLessThanOrEqualTo(cap)
                    .isGreaterThanOrEqualTo(cap.minus(spent.multipliedBy(2)));
            lease.release();
        }
        try (LockProvider locks = Locks.open(ETCD.server().uri() + "?keyPrefix=drift-cap0/&driftFactor=0")) {
            assertThat(locks.info().clock()).isEqualTo(ClockAssumption.rateDrift(0));
            long before = System.nanoTime();
            Lease lease = locks.acquire("t", LeaseOptions.of(leaseTime).withWaitTime(RETRIES));
            Duration left = lease.remaining();
            Duration spent = Duration.ofNanos(System.nanoTime() - before);
            assertThat(left)
                    .as("with no allowance the cap (3 s less 2 ms) is beyond the lease time")
                    .isLessThanOrEqualTo(leaseTime)
                    .isGreaterThanOrEqualTo(leaseTime.minus(spent.multipliedBy(2)));
            lease.release();
        }
    }

    @Test
    @DisplayName("a driftFactor outside [0, 0.5) or not a number is refused, naming it and the value; nothing is"
            + " opened")
    void badDriftFactorIsRefused() throws Exception {
        long leasesBefore = leases();
        for (String bad : new String[] {"-0.01", "0.5", "1", "1.5", "NaN", "Infinity", "abc", ""}) {
            assertThatThrownBy(() -> Locks.open(ETCD.server().uri() + "?keyPrefix=drift-bad/&driftFactor=" + bad))
                    .as("driftFactor=%s", bad)
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("driftFactor")
                    .hasMessageContaining(bad.isEmpty() ? "''" : bad)
                    .hasCauseInstanceOf(IllegalArgumentException.class);
        }
        try (Client client =
                Client.builder().endpoints(ETCD.server().endpoint()).build()) {
            EtcdLockProvider.Builder builder = EtcdLockProvider.builder(client);
            for (double bad : new double[] {-0.01, 0.5, 1, Double.NaN, Double.POSITIVE_INFINITY}) {
                assertThatThrownBy(() -> builder.driftFactor(bad))
                        .as("driftFactor(%s)", bad)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("driftFactor")
                        .hasMessageContaining(String.valueOf(bad));
            }
        }
        assertThat(leases()).as("etcd leases granted").isEqualTo(leasesBefore);
        try (LockProvider locks = Locks.open(ETCD.server().uri() + "?keyPrefix=drift-good/&driftFactor=0.2")) {
            locks.acquire("t", LeaseOptions.of(Duration.ofSeconds(2))).release();
        }
        assertThat(leases())
                .as("etcd leases granted, once a valid driftFactor is given")
                .isGreaterThan(leasesBefore);
    }

    /** How many leases etcd has granted since it started, from its own metrics. */
    private static long leases() throws Exception {
        return EtcdMetrics.sum(ETCD.server(), "etcd_debugging_lease_granted_total", "");
    }
}
