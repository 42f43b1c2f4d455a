package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.ClockAssumption;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.Locks;
import io.lockstep.spi.ClockDrift;
import io.lockstep.tck.servers.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Lease mode's clock drift allowance: the row expires after the whole lease time on the database's clock,
 * which may run fast, so the holder counts a grant or an extension valid for {@code leaseTime −
 * (leaseTime × driftFactor + 2 ms)} from when it was sent, and declares {@code rateDrift(driftFactor)}.
 * Checked on PostgreSQL and H2 by comparing {@code remaining()} with what the allowance and the time since
 * before the call allow: no timing windows.
 */
@ResourceLock(SharedServers.POSTGRES)
class JdbcDriftAllowanceTest {

    private static final Duration LEASE = Duration.ofSeconds(10);
    private static final String H2 = "jdbc:h2:mem:lockstep-drift;DB_CLOSE_DELAY=-1";

    private static String pgUri(String extra) {
        PostgresServer pg = SharedServers.postgres();
        return SharedServers.pgUri(pg.host(), pg.port(), "lease", "&table=drift_lease&notifications=false" + extra);
    }

    @Test
    @DisplayName("on PostgreSQL a lease is valid for its lease time less 1% and 2 ms, after a grant and an extend")
    void postgresValidityLeavesTheDefaultAllowance() {
        try (LockProvider locks = Locks.open(pgUri(""))) {
            assertThat(locks.info().clock()).isEqualTo(ClockAssumption.rateDrift(0.01));
            assertValidityLeavesTheAllowance(locks, "drift/pg", ClockDrift.DEFAULT_FACTOR);
        }
    }

    @Test
    @DisplayName("on H2 driftFactor sets the allowance (0.1: 1,002 ms of 10 s) while the row keeps the whole lease")
    void h2ValidityFollowsTheDriftFactor() {
        try (LockProvider locks = Locks.open(H2 + "?user=sa&createSchema=true&driftFactor=0.1")) {
            assertThat(locks.info().clock()).isEqualTo(ClockAssumption.rateDrift(0.1));
            Lease lease = assertValidityLeavesTheAllowance(locks, "drift/h2", 0.1);
            Duration holderCounts = lease.remaining();
            LockState row = locks.inspect("drift/h2").orElseThrow();
            assertThat(row.remaining())
                    .as("the row's time left on the database's clock, read after the holder's")
                    .hasValueSatisfying(left -> assertThat(left).isGreaterThan(holderCounts));
            lease.release();
        }
        try (LockProvider locks = Locks.open(H2 + "?user=sa&createSchema=true&driftFactor=0")) {
            assertThat(locks.info().clock()).isEqualTo(ClockAssumption.rateDrift(0));
            assertValidityLeavesTheAllowance(locks, "drift/h2-zero", 0).release();
        }
    }

    @Test
    @DisplayName("the builder's driftFactor sets the allowance; session mode declares no drift (no expiry on the"
            + " database's clock)")
    void builderOptionAndSessionMode() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(H2);
        ds.setUser("sa");
        try (JdbcLockProvider locks = JdbcLockProvider.builder(ds)
                .createSchema(true)
                .table("drift_builder")
                .driftFactor(0.05)
                .build()) {
            assertThat(locks.info().clock()).isEqualTo(ClockAssumption.rateDrift(0.05));
            assertValidityLeavesTheAllowance(locks, "drift/builder", 0.05).release();
        }
        try (JdbcLockProvider locks = JdbcLockProvider.builder(ds)
                .mode(JdbcMode.SESSION)
                .createSchema(true)
                .driftFactor(0.05)
                .build()) {
            assertThat(locks.info().clock()).isEqualTo(ClockAssumption.NONE);
        }
    }

    @Test
    @DisplayName("a lease no longer than the allowance is refused, naming leaseTime and the allowance")
    void leaseShorterThanTheAllowanceIsRefused() {
        try (LockProvider locks = Locks.open(H2 + "?user=sa&createSchema=true")) {
            assertThatThrownBy(() -> locks.tryAcquire("drift/short", LeaseOptions.of(Duration.ofMillis(2))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("leaseTime")
                    .hasMessageContaining("drift allowance")
                    .hasMessageContaining("PT0.002S");
            assertThat(locks.inspect("drift/short"))
                    .as("nothing claimed")
                    .hasValueSatisfying(state -> assertThat(state.held()).isFalse());
        }
    }

    @Test
    @DisplayName("a driftFactor outside [0, 0.5) or not a number is refused, naming it and the value, before"
            + " anything is opened")
    void badDriftFactorIsRefused() throws SQLException {
        for (String bad : new String[] {"-0.01", "0.5", "1", "1.5", "NaN", "Infinity", "abc", ""}) {
            assertThatThrownBy(
                            () -> Locks.open(pgUri("&table=drift_never&ApplicationName=drifttest&driftFactor=" + bad)))
                    .as("driftFactor=%s", bad)
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("driftFactor")
                    .hasMessageContaining(bad.isEmpty() ? "''" : bad)
                    .hasRootCauseInstanceOf(
                            bad.equals("abc") || bad.isEmpty()
                                    ? NumberFormatException.class
                                    : IllegalArgumentException.class);
        }
        PostgresServer pg = SharedServers.postgres();
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                Statement st = c.createStatement()) {
            assertThat(count(st, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'drifttest'"))
                    .as("sessions opened")
                    .isZero();
            assertThat(count(st, "SELECT count(*) FROM pg_class WHERE relname LIKE 'drift_never%'"))
                    .as("tables or sequences created")
                    .isZero();
        }
        JdbcLockProvider.Builder builder = JdbcLockProvider.builder(new JdbcDataSource());
        for (double bad : new double[] {-0.01, 0.5, 1, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThatThrownBy(() -> builder.driftFactor(bad))
                    .as("driftFactor(%s)", bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("driftFactor")
                    .hasMessageContaining(String.valueOf(bad));
        }
    }

    /**
     * Acquires {@code name} for {@link #LEASE} and extends it, checking each time that {@code remaining()} is
     * at most the lease time less the allowance and at least that less the time since before the call.
     */
    private static Lease assertValidityLeavesTheAllowance(LockProvider locks, String name, double driftFactor) {
        Duration validity = ClockDrift.validity(LEASE, driftFactor);
        assertThat(validity).isEqualTo(LEASE.minus(ClockDrift.allowance(LEASE, driftFactor)));
        long before = System.nanoTime();
        Lease lease = locks.acquire(name, LeaseOptions.of(LEASE));
        Duration left = lease.remaining();
        Duration spent = Duration.ofNanos(System.nanoTime() - before);
        assertThat(left).as("remaining() after the grant").isLessThanOrEqualTo(validity);
        assertThat(left).as("remaining() after the grant").isGreaterThanOrEqualTo(validity.minus(spent));

        before = System.nanoTime();
        assertThat(lease.extend(LEASE)).isTrue();
        left = lease.remaining();
        spent = Duration.ofNanos(System.nanoTime() - before);
        assertThat(left).as("remaining() after an extend").isLessThanOrEqualTo(validity);
        assertThat(left).as("remaining() after an extend").isGreaterThanOrEqualTo(validity.minus(spent));
        return lease;
    }

    private static long count(Statement st, String sql) throws SQLException {
        try (ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
