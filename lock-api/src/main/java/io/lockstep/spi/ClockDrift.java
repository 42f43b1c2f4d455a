package io.lockstep.spi;

import java.time.Duration;

/**
 * The one rule for backends whose lock expiry runs on the server's clock (a Redis key's {@code PX},
 * Redlock's keys on each node): the server counts the lease time on a clock that may run faster than
 * the client's monotonic clock (rate error, or a wall clock stepped forward by NTP or by hand), so the
 * validity a client reports is the lease time minus an allowance of {@code leaseTime × driftFactor +
 * 2 ms}, as the Redlock spec does. {@code driftFactor} is 0.01 by default (1%, far above the drift of a
 * disciplined clock; it does not cover a clock stepped by more than that). Backends that count
 * validity on the client's own clock need no allowance.
 *
 * <p>Stateless; all methods are thread-safe.
 */
public final class ClockDrift {

    /** The default drift factor: 1% of the lease time. */
    public static final double DEFAULT_FACTOR = 0.01;

    /** The fixed part of the allowance: the server's and the client's clocks tick in whole milliseconds. */
    public static final Duration FIXED = Duration.ofMillis(2);

    private ClockDrift() {}

    /**
     * {@code driftFactor} if it is in [0, 0.5).
     *
     * @throws IllegalArgumentException naming {@code driftFactor} and the value otherwise
     */
    public static double requireFactor(double driftFactor) {
        if (!(driftFactor >= 0 && driftFactor < 0.5)) {
            throw new IllegalArgumentException("driftFactor must be in [0, 0.5), was " + driftFactor);
        }
        return driftFactor;
    }

    /** {@code leaseTime × driftFactor + 2 ms}. */
    public static Duration allowance(Duration leaseTime, double driftFactor) {
        return Duration.ofNanos(Math.round(leaseTime.toNanos() * driftFactor)).plus(FIXED);
    }

    /** {@code leaseTime − allowance}; zero or negative when the lease time does not exceed the allowance. */
    public static Duration validity(Duration leaseTime, double driftFactor) {
        return leaseTime.minus(allowance(leaseTime, driftFactor));
    }
}
