package io.lockstep.redlock;

import io.lockstep.spi.ClockDrift;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.jspecify.annotations.Nullable;

/**
 * How Redlock runs over its nodes: clock drift allowance, key prefix, per-node timeout, retry delay,
 * the longest lease time (how long a restarted node is left out of quorums), whether nodes persist
 * every write, and the quorum size.
 *
 * <p>Immutable; every {@code with} method validates and names the field and value in its message.
 *
 * <pre>{@code
 * RedlockOptions.defaults()
 *     .withDriftFactor(0.01)
 *     .withKeyPrefix("")                       // spec-compatible keys: SET name token NX PX ttl
 *     .withMaxLeaseTime(Duration.ofMinutes(1)) // a restarted node sits out this long
 * }</pre>
 */
public final class RedlockOptions {

    /** The spec's clock drift factor: 1% of the lease time (plus 2 ms), as for every Lockstep backend. */
    public static final double DEFAULT_DRIFT_FACTOR = ClockDrift.DEFAULT_FACTOR;
    /** The default delay between attempts on a held lock; the real delay is random in [d/2, d]. */
    public static final Duration DEFAULT_RETRY_DELAY = Duration.ofMillis(100);
    /** The default for {@link #maxLeaseTime()}. */
    public static final Duration DEFAULT_MAX_LEASE_TIME = Duration.ofSeconds(60);
    /** The longest key prefix, in bytes of UTF-8. */
    public static final int MAX_PREFIX_BYTES = 128;
    /** The shortest node timeout that follows the lease time (a tenth of it) by default. */
    public static final Duration DEFAULT_MIN_NODE_TIMEOUT = Duration.ofMillis(10);
    /** The longest node timeout that follows the lease time (a tenth of it) by default. */
    public static final Duration DEFAULT_MAX_NODE_TIMEOUT = Duration.ofMillis(250);

    private static final RedlockOptions DEFAULTS = new RedlockOptions(
            DEFAULT_DRIFT_FACTOR,
            "",
            new NodeTimeout(null, DEFAULT_MIN_NODE_TIMEOUT, DEFAULT_MAX_NODE_TIMEOUT),
            DEFAULT_RETRY_DELAY,
            DEFAULT_MAX_LEASE_TIME,
            false,
            0,
            0);

    private final double driftFactor;
    private final String keyPrefix;
    private final NodeTimeout nodeTimeout;
    private final Duration retryDelay;
    private final Duration maxLeaseTime;
    private final boolean persistentNodes;
    private final int quorum;
    private final int maxInFlight;

    private RedlockOptions(
            double driftFactor,
            String keyPrefix,
            NodeTimeout nodeTimeout,
            Duration retryDelay,
            Duration maxLeaseTime,
            boolean persistentNodes,
            int quorum,
            int maxInFlight) {
        this.driftFactor = driftFactor;
        this.keyPrefix = keyPrefix;
        this.nodeTimeout = nodeTimeout;
        this.retryDelay = retryDelay;
        this.maxLeaseTime = maxLeaseTime;
        this.persistentNodes = persistentNodes;
        this.quorum = quorum;
        this.maxInFlight = maxInFlight;
    }

    /** Drift factor 0.01, empty key prefix, node timeout from the lease time, majority quorum. */
    public static RedlockOptions defaults() {
        return DEFAULTS;
    }

    /**
     * The clock drift allowance as a fraction of the lease time, in [0, 0.5); validity is
     * {@code TTL − elapsed − (TTL × driftFactor + 2 ms)}.
     *
     * @throws IllegalArgumentException if outside [0, 0.5)
     */
    public RedlockOptions withDriftFactor(double driftFactor) {
        ClockDrift.requireFactor(driftFactor);
        return new RedlockOptions(
                driftFactor, keyPrefix, nodeTimeout, retryDelay, maxLeaseTime, persistentNodes, quorum, maxInFlight);
    }

    /**
     * A prefix for every key; empty (the default) makes the lock key the lock name itself, as the
     * Redlock spec does, so other spec-following clients exclude and are excluded on the same names.
     *
     * @throws IllegalArgumentException if it has control characters or more than {@value #MAX_PREFIX_BYTES} bytes
     */
    public RedlockOptions withKeyPrefix(String keyPrefix) {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        for (int i = 0; i < keyPrefix.length(); i++) {
            if (Character.isISOControl(keyPrefix.charAt(i))) {
                throw new IllegalArgumentException(String.format(
                        "keyPrefix must not contain control characters; U+%04X at index %d",
                        (int) keyPrefix.charAt(i), i));
            }
        }
        int bytes = keyPrefix.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_PREFIX_BYTES) {
            throw new IllegalArgumentException(
                    "keyPrefix must be at most " + MAX_PREFIX_BYTES + " bytes of UTF-8, was " + bytes);
        }
        return new RedlockOptions(
                driftFactor, keyPrefix, nodeTimeout, retryDelay, maxLeaseTime, persistentNodes, quorum, maxInFlight);
    }

    /**
     * How long one node may take to answer before it is counted as failed, 1 ms to 10 s, whatever the
     * lease time; replaces a {@linkplain #withNodeTimeoutRange range}. By default a tenth of the lease
     * time, between 10 ms and 250 ms.
     */
    public RedlockOptions withNodeTimeout(Duration nodeTimeout) {
        requireBetween("nodeTimeout", nodeTimeout, Duration.ofMillis(1), Duration.ofSeconds(10));
        return new RedlockOptions(
                driftFactor,
                keyPrefix,
                new NodeTimeout(nodeTimeout, this.nodeTimeout.min(), this.nodeTimeout.max()),
                retryDelay,
                maxLeaseTime,
                persistentNodes,
                quorum,
                maxInFlight);
    }

    /**
     * Keeps the node timeout a tenth of the lease time, but no shorter than {@code min} and no longer than
     * {@code max} (each 1 ms to 10 s); replaces a fixed {@linkplain #withNodeTimeout node timeout}. The
     * default range is 10 ms to 250 ms. A higher floor suits nodes that answer slowly now and then (a
     * busy host, a far region) without giving a one-minute lease the same timeout as a one-second one.
     *
     * @throws IllegalArgumentException naming the field if either is out of range, or if min exceeds max
     */
    public RedlockOptions withNodeTimeoutRange(Duration min, Duration max) {
        requireBetween("minNodeTimeout", min, Duration.ofMillis(1), Duration.ofSeconds(10));
        requireBetween("maxNodeTimeout", max, Duration.ofMillis(1), Duration.ofSeconds(10));
        if (min.compareTo(max) > 0) {
            throw new IllegalArgumentException(
                    "minNodeTimeout must not exceed maxNodeTimeout, was " + min + " > " + max);
        }
        return new RedlockOptions(
                driftFactor,
                keyPrefix,
                new NodeTimeout(null, min, max),
                retryDelay,
                maxLeaseTime,
                persistentNodes,
                quorum,
                maxInFlight);
    }

    /** The delay before a held lock is asked again, 1 ms to 10 s; each wait is random in [d/2, d]. */
    public RedlockOptions withRetryDelay(Duration retryDelay) {
        requireBetween("retryDelay", retryDelay, Duration.ofMillis(1), Duration.ofSeconds(10));
        return new RedlockOptions(
                driftFactor, keyPrefix, nodeTimeout, retryDelay, maxLeaseTime, persistentNodes, quorum, maxInFlight);
    }

    /**
     * The longest lease time any client uses on these nodes, 1 ms to 1 day: a node seen to restart
     * (its {@code run_id} changed) is left out of quorums this long, or for the longest lease time this
     * provider has used if that is longer (the spec's delayed restart).
     */
    public RedlockOptions withMaxLeaseTime(Duration maxLeaseTime) {
        requireBetween("maxLeaseTime", maxLeaseTime, Duration.ofMillis(1), Duration.ofDays(1));
        return new RedlockOptions(
                driftFactor, keyPrefix, nodeTimeout, retryDelay, maxLeaseTime, persistentNodes, quorum, maxInFlight);
    }

    /**
     * Declares that every node persists each write before answering ({@code appendonly yes},
     * {@code appendfsync always}), so a restarted node keeps its keys and fence counters and is not
     * left out of quorums. Checked against the node's configuration when it restarts.
     */
    public RedlockOptions withPersistentNodes(boolean persistentNodes) {
        return new RedlockOptions(
                driftFactor, keyPrefix, nodeTimeout, retryDelay, maxLeaseTime, persistentNodes, quorum, maxInFlight);
    }

    /**
     * How many nodes must grant, instead of the majority N/2+1. A larger quorum Q keeps fencing tokens
     * increasing even when up to {@code 2Q − N − 1} nodes lose their state (see the README); it must be
     * between N/2+1 and N, checked when the provider is built.
     *
     * @throws IllegalArgumentException if below 1
     */
    public RedlockOptions withQuorum(int quorum) {
        if (quorum < 1) {
            throw new IllegalArgumentException("quorum must be at least 1, was " + quorum);
        }
        return new RedlockOptions(
                driftFactor, keyPrefix, nodeTimeout, retryDelay, maxLeaseTime, persistentNodes, quorum, maxInFlight);
    }

    /**
     * How many calls this provider may have in flight on one node at once, 1 to 10,000; by default one
     * less than the node's connection pool holds (the remaining connection is the release subscriber's).
     * A call beyond it waits in line for a free slot (up to 1 s) rather than fail.
     *
     * @throws IllegalArgumentException if outside [1, 10000]
     */
    public RedlockOptions withMaxInFlight(int maxInFlight) {
        if (maxInFlight < 1 || maxInFlight > 10_000) {
            throw new IllegalArgumentException("maxInFlight must be between 1 and 10000, was " + maxInFlight);
        }
        return new RedlockOptions(
                driftFactor, keyPrefix, nodeTimeout, retryDelay, maxLeaseTime, persistentNodes, quorum, maxInFlight);
    }

    /** The in-flight cap per node if set; empty means one less than the node's pool size. */
    public OptionalInt maxInFlight() {
        return maxInFlight == 0 ? OptionalInt.empty() : OptionalInt.of(maxInFlight);
    }

    /** The drift factor. */
    public double driftFactor() {
        return driftFactor;
    }

    /** The key prefix; empty by default. */
    public String keyPrefix() {
        return keyPrefix;
    }

    /** The fixed per-node timeout, if set; otherwise it follows the lease time within the range. */
    public Optional<Duration> nodeTimeout() {
        return Optional.ofNullable(nodeTimeout.fixed());
    }

    /** The shortest node timeout that follows the lease time; unused when a fixed one is set. */
    public Duration minNodeTimeout() {
        return nodeTimeout.min();
    }

    /** The longest node timeout that follows the lease time; unused when a fixed one is set. */
    public Duration maxNodeTimeout() {
        return nodeTimeout.max();
    }

    /** The per-node timeout used for an operation on a lease of {@code leaseTime}. */
    public Duration nodeTimeoutFor(Duration leaseTime) {
        return nodeTimeout.forLease(leaseTime);
    }

    /** The retry delay. */
    public Duration retryDelay() {
        return retryDelay;
    }

    /** The longest lease time clients use; how long a restarted node sits out at least. */
    public Duration maxLeaseTime() {
        return maxLeaseTime;
    }

    /** Whether nodes are declared to persist every write. */
    public boolean persistentNodes() {
        return persistentNodes;
    }

    /** The quorum size if set; empty means the majority. */
    public OptionalInt quorum() {
        return quorum == 0 ? OptionalInt.empty() : OptionalInt.of(quorum);
    }

    private static void requireBetween(String field, @Nullable Duration value, Duration min, Duration max) {
        if (value == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(field + " must be between " + min + " and " + max + ", was " + value);
        }
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof RedlockOptions other
                && driftFactor == other.driftFactor
                && keyPrefix.equals(other.keyPrefix)
                && nodeTimeout.equals(other.nodeTimeout)
                && retryDelay.equals(other.retryDelay)
                && maxLeaseTime.equals(other.maxLeaseTime)
                && persistentNodes == other.persistentNodes
                && quorum == other.quorum
                && maxInFlight == other.maxInFlight;
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                driftFactor, keyPrefix, nodeTimeout, retryDelay, maxLeaseTime, persistentNodes, quorum, maxInFlight);
    }

    @Override
    public String toString() {
        return "RedlockOptions[driftFactor=" + driftFactor + ", keyPrefix='" + keyPrefix + "', nodeTimeout="
                + nodeTimeout + ", retryDelay=" + retryDelay + ", maxLeaseTime="
                + maxLeaseTime + ", persistentNodes=" + persistentNodes + ", quorum="
                + (quorum == 0 ? "majority" : quorum) + ", maxInFlight="
                + (maxInFlight == 0 ? "pool size - 1" : maxInFlight) + "]";
    }

    /** A fixed node timeout, or a tenth of the lease time within [min, max]. */
    private record NodeTimeout(@Nullable Duration fixed, Duration min, Duration max) {
        Duration forLease(Duration leaseTime) {
            if (fixed != null) {
                return fixed;
            }
            long millis = Math.max(min.toMillis(), Math.min(max.toMillis(), leaseTime.toMillis() / 10));
            return Duration.ofMillis(millis);
        }

        @Override
        public String toString() {
            return fixed != null ? fixed.toString() : "TTL/10 in [" + min + ", " + max + "]";
        }
    }
}
