package io.lockstep;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * How to take and hold a lease: lease time (TTL), how long to wait for the lock, whether to renew it
 * automatically, the longest it may be held by renewal, and an optional label that names the holder to
 * operators.
 *
 * <p>Immutable and validated on construction; every message names the field and the value.
 *
 * <pre>{@code
 * LeaseOptions.of(Duration.ofSeconds(30))
 *     .withWaitTime(Duration.ofSeconds(5))
 *     .withAutoRenew(Duration.ofMinutes(10)); // renew at TTL/3, at most 10 minutes in all
 * }</pre>
 */
public final class LeaseOptions {

    /** The shortest lease time: backends count lease time in whole milliseconds. */
    public static final Duration MIN_LEASE_TIME = Duration.ofMillis(1);
    /** The longest lease time, wait time or maximum hold; longer values are almost always a unit mistake. */
    public static final Duration MAX_DURATION = Duration.ofDays(365);

    private final Duration leaseTime;
    private final Duration waitTime;
    private final boolean autoRenew;
    private final @Nullable Duration maxHold;
    private final @Nullable String label;

    private LeaseOptions(
            Duration leaseTime,
            Duration waitTime,
            boolean autoRenew,
            @Nullable Duration maxHold,
            @Nullable String label) {
        this.leaseTime = requireBetween("leaseTime", leaseTime, MIN_LEASE_TIME);
        this.waitTime = requireBetween("waitTime", waitTime, Duration.ZERO);
        this.autoRenew = autoRenew;
        if (maxHold != null) {
            requireBetween("maxHold", maxHold, MIN_LEASE_TIME);
            if (!autoRenew) {
                throw new IllegalArgumentException("maxHold (" + maxHold + ") caps renewal; it needs autoRenew");
            }
            if (maxHold.compareTo(leaseTime) < 0) {
                throw new IllegalArgumentException(
                        "maxHold must be at least leaseTime (" + leaseTime + "), was " + maxHold);
            }
        }
        this.maxHold = maxHold;
        this.label = label;
    }

    /** A lease of {@code leaseTime}, no waiting, no automatic renewal. */
    public static LeaseOptions of(Duration leaseTime) {
        return new LeaseOptions(leaseTime, Duration.ZERO, false, null, null);
    }

    /** The same options, waiting up to {@code waitTime} for the lock. */
    public LeaseOptions withWaitTime(Duration waitTime) {
        return new LeaseOptions(leaseTime, waitTime, autoRenew, maxHold, label);
    }

    /** The same options, renewed automatically at a third of the lease time until released or lost. */
    public LeaseOptions withAutoRenew() {
        return new LeaseOptions(leaseTime, waitTime, true, null, label);
    }

    /** The same options, renewed automatically but held at most {@code maxHold} in all. */
    public LeaseOptions withAutoRenew(Duration maxHold) {
        return new LeaseOptions(leaseTime, waitTime, true, Objects.requireNonNull(maxHold, "maxHold"), label);
    }

    /** The same options with another lease time. */
    public LeaseOptions withLeaseTime(Duration leaseTime) {
        return new LeaseOptions(leaseTime, waitTime, autoRenew, maxHold, label);
    }

    /**
     * The same options with {@code label}, kept with the holder's host and pid where the backend can keep
     * them, so that {@code lockctl inspect} ({@link LockProvider#inspect}) can say who holds the lock: a
     * job name, a role, a ticket. Checked here, so a bad label fails before anything is acquired.
     *
     * @throws IllegalArgumentException if the label breaks {@link Holder#requireValidLabel}'s rule (1 to 64
     *     ASCII letters, digits and {@code . _ - : @ / +}); the message names the label and the character
     */
    public LeaseOptions withLabel(String label) {
        return new LeaseOptions(leaseTime, waitTime, autoRenew, maxHold, Holder.requireValidLabel(label));
    }

    /** The label naming the holder to operators, if one was given. */
    public Optional<String> label() {
        return Optional.ofNullable(label);
    }

    /** How long the backend keeps the lock without renewal (its TTL). */
    public Duration leaseTime() {
        return leaseTime;
    }

    /** How long {@code acquire}/{@code tryAcquire} wait for a lock held by someone else. */
    public Duration waitTime() {
        return waitTime;
    }

    /** Whether the shared scheduler renews the lease at a third of its lease time. */
    public boolean autoRenew() {
        return autoRenew;
    }

    /** The cap on the whole hold through automatic renewal, if any. */
    public Optional<Duration> maxHold() {
        return Optional.ofNullable(maxHold);
    }

    /**
     * Checks a lease time passed on its own (to {@link Lease#extend(Duration)}).
     *
     * @throws IllegalArgumentException naming the field and the value
     */
    public static Duration requireValidLeaseTime(@Nullable Duration leaseTime) {
        return requireBetween("leaseTime", leaseTime, MIN_LEASE_TIME);
    }

    private static Duration requireBetween(String field, @Nullable Duration value, Duration min) {
        if (value == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        if (value.compareTo(min) < 0) {
            throw new IllegalArgumentException(field + " must be at least " + min + ", was " + value);
        }
        if (value.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException(field + " must be at most " + MAX_DURATION + ", was " + value);
        }
        return value;
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof LeaseOptions other
                && leaseTime.equals(other.leaseTime)
                && waitTime.equals(other.waitTime)
                && autoRenew == other.autoRenew
                && Objects.equals(maxHold, other.maxHold)
                && Objects.equals(label, other.label);
    }

    @Override
    public int hashCode() {
        return Objects.hash(leaseTime, waitTime, autoRenew, maxHold, label);
    }

    @Override
    public String toString() {
        return "LeaseOptions[leaseTime=" + leaseTime + ", waitTime=" + waitTime + ", autoRenew=" + autoRenew
                + (maxHold == null ? "" : ", maxHold=" + maxHold) + (label == null ? "" : ", label=" + label) + "]";
    }
}
