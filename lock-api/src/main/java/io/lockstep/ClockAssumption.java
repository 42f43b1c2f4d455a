package io.lockstep;

import java.time.Duration;
import java.util.Objects;

/**
 * The clock assumption a provider's exclusion rests on, declared in {@link ProviderInfo#clock()} so that
 * users can read it and the compatibility kit can test it: within it, two leases' validity never
 * overlaps; beyond it, only a fenced resource (checking {@link Lease#fencingToken()}) still rejects a
 * stale holder's writes.
 *
 * <p>Immutable and thread-safe.
 *
 * @param maxRateDrift how much faster the clock that ends a lock (the server's that counts a key's TTL,
 *     or another client's that judges a lease expired) may run than the holder's own monotonic clock, as
 *     a fraction of elapsed time: 0.01 tolerates 1%; 0 assumes the rates agree. In [0, 1).
 * @param comparesWallClocks whether expiry compares a timestamp written by one client's wall clock with
 *     another client's wall clock (a compare-and-swap store without server-side expiry)
 * @param maxWallClockOffset the largest offset between clients' wall clocks that exclusion tolerates;
 *     {@link Duration#ZERO} and meaningless when {@code comparesWallClocks} is false
 */
public record ClockAssumption(double maxRateDrift, boolean comparesWallClocks, Duration maxWallClockOffset) {

    /** No tolerance declared: rates are assumed to agree, and no wall clocks are compared. */
    public static final ClockAssumption NONE = new ClockAssumption(0, false, Duration.ZERO);

    /**
     * Validates.
     *
     * @throws IllegalArgumentException naming {@code maxRateDrift} or {@code maxWallClockOffset} and the value
     */
    public ClockAssumption {
        Objects.requireNonNull(maxWallClockOffset, "maxWallClockOffset");
        if (!(maxRateDrift >= 0 && maxRateDrift < 1)) {
            throw new IllegalArgumentException("maxRateDrift must be in [0, 1), was " + maxRateDrift);
        }
        if (maxWallClockOffset.isNegative()) {
            throw new IllegalArgumentException("maxWallClockOffset must not be negative, was " + maxWallClockOffset);
        }
    }

    /** Tolerates a clock that ends the lock running up to {@code maxRateDrift} faster; compares no wall clocks. */
    public static ClockAssumption rateDrift(double maxRateDrift) {
        return new ClockAssumption(maxRateDrift, false, Duration.ZERO);
    }

    /** This assumption, for a provider that compares clients' wall clocks and tolerates {@code maxOffset}. */
    public ClockAssumption withWallClockOffset(Duration maxOffset) {
        return new ClockAssumption(maxRateDrift, true, maxOffset);
    }
}
