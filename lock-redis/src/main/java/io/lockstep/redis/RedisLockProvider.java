package io.lockstep.redis;

import io.lockstep.LockRuntime;
import io.lockstep.redis.internal.RedisBackend;
import io.lockstep.redis.internal.RedisTopology;
import io.lockstep.redis.internal.ReplicaAck;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.ForwardingLockProvider;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.UnifiedJedis;

/**
 * Locks on one Redis server, a Redis Cluster when given a {@code JedisCluster}, or a Sentinel-watched
 * primary ({@code redis-sentinel://} through {@link RedisLockProviderFactory}, which also reports leases a
 * failover may have lost).
 *
 * <p>Acquire is one Lua script: {@code SET key token NX PX ttl} and {@code INCR} of the lock's fence
 * counter, atomically; release is compare-and-delete and announces the release on pub/sub so waiters
 * wake at once; extend is compare-and-{@code PEXPIRE}. Lock names are only ever passed as KEYS/ARGV.
 *
 * <p>Closing it releases the leases it still holds, stops the release subscription, and closes the
 * client if {@link Builder#closeClient} was set.
 *
 * <p>Tier {@link io.lockstep.StrengthTier#BEST_EFFORT}: exclusion survives a holder crash (the key
 * expires), not a failover to a replica that missed the write, nor a restart of a server without
 * {@code appendfsync always}; after such a restart fences start again from the persisted counter, or
 * from zero without persistence. The server counts a lease's TTL on its own clock, so a grant is reported
 * valid for the TTL less a clock drift allowance ({@link Builder#driftFactor}). Thread-safe.
 *
 * <pre>{@code
 * try (LockProvider locks = RedisLockProvider.builder(new JedisPooled("localhost", 6379)).build()) { ... }
 * }</pre>
 */
public final class RedisLockProvider extends ForwardingLockProvider {

    /** The default key prefix. */
    public static final String DEFAULT_KEY_PREFIX = "lockstep:";

    /** The default of {@link Builder#inboxWait}, in milliseconds. */
    public static final long DEFAULT_INBOX_WAIT_MILLIS = 500;

    private static final Duration DEFAULT_INBOX_WAIT = Duration.ofMillis(DEFAULT_INBOX_WAIT_MILLIS);

    /** The shortest {@link Builder#inboxWait} other than zero, in milliseconds. */
    public static final long MIN_INBOX_WAIT_MILLIS = 10;

    private RedisLockProvider(Builder b) {
        super(new BackendLockProvider<>(
                new RedisBackend(
                        b.topology != null ? b.topology : RedisTopology.direct(b.jedis, b.closeClient),
                        b.replicaAck,
                        b.keyPrefix,
                        b.driftFactor,
                        b.where,
                        b.runtime.clock(),
                        b.inboxWait),
                b.runtime));
    }

    /** A builder over {@code jedis} ({@code JedisPooled} for one server, {@code JedisCluster} for a cluster). */
    public static Builder builder(UnifiedJedis jedis) {
        return new Builder(jedis);
    }

    /** Builds a {@link RedisLockProvider}. */
    public static final class Builder {
        private final UnifiedJedis jedis;
        private String keyPrefix = DEFAULT_KEY_PREFIX;
        private double driftFactor = ClockDrift.DEFAULT_FACTOR;
        private LockRuntime runtime = LockRuntime.defaults();
        private boolean closeClient;
        private String where = "(client supplied)";
        private ReplicaAck replicaAck = ReplicaAck.NONE;
        private Duration inboxWait = DEFAULT_INBOX_WAIT;
        private @Nullable RedisTopology topology;

        private Builder(UnifiedJedis jedis) {
            this.jedis = Objects.requireNonNull(jedis, "jedis");
        }

        /**
         * The prefix of every key (default {@value #DEFAULT_KEY_PREFIX}): at most 64 characters, no
         * braces (they would break cluster hash tags) and no control characters.
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = requireValidPrefix(keyPrefix);
            return this;
        }

        /**
         * The clock drift allowance as a fraction of the lease time, in [0, 0.5), default 0.01: a grant
         * is reported valid for {@code TTL − (TTL × driftFactor + 2 ms)}, because the server counts the
         * TTL on its own clock, which may run faster than ours (see {@link ClockDrift}).
         *
         * @throws IllegalArgumentException if outside [0, 0.5)
         */
        public Builder driftFactor(double driftFactor) {
            this.driftFactor = ClockDrift.requireFactor(driftFactor);
            return this;
        }

        /** The runtime (clock, scheduler, metrics, retry). */
        public Builder runtime(LockRuntime runtime) {
            this.runtime = Objects.requireNonNull(runtime, "runtime");
            return this;
        }

        /** Whether closing the provider closes the Jedis client too (default false: the caller owns it). */
        public Builder closeClient(boolean closeClient) {
            this.closeClient = closeClient;
            return this;
        }

        /**
         * Makes an acquire or extend count only once {@code WAIT replicas timeout} confirms that many
         * replicas have the write; otherwise it fails closed ({@link io.lockstep.BackendUnavailableException},
         * retried as a transient failure) and what was written is released. This narrows, but does not
         * close, the failover window (see the module README). {@code replicas} 0 turns it off (the default).
         *
         * @param replicas 0 to 16
         * @param timeout how long {@code WAIT} may block, 1 ms to 1 minute; keep it below the client's socket
         *     timeout, or the command fails before {@code WAIT} answers
         * @throws IllegalArgumentException naming the field and the value
         */
        public Builder waitReplicas(int replicas, Duration timeout) {
            Objects.requireNonNull(timeout, "waitTimeout");
            if (replicas < 0 || replicas > 16) {
                throw new IllegalArgumentException("waitReplicas must be between 0 and 16, was " + replicas);
            }
            if (replicas > 0 && (timeout.toMillis() < 1 || timeout.compareTo(Duration.ofMinutes(1)) > 0)) {
                throw new IllegalArgumentException("waitTimeout must be between 1 ms and 1 minute, was " + timeout);
            }
            this.replicaAck = replicas == 0 ? ReplicaAck.NONE : new ReplicaAck(replicas, timeout);
            return this;
        }

        /**
         * How long the provider's oldest waiter blocks on its grant inbox in one request (default {@value
         * RedisLockProvider#DEFAULT_INBOX_WAIT_MILLIS} ms). A release that grants a queued waiter puts the
         * fence in that waiter's inbox as well as announcing it; the oldest waiter of each provider blocks
         * there ({@code BLPOP}), on one pooled connection while it waits, so the server's reply wakes it with
         * no hand-over from the subscriber thread. Keep it below the client's socket timeout (a block that
         * outlasts it fails the connection, and the inbox is then left alone for 30 s); {@link
         * Duration#ZERO} turns the inbox off, for a pool too small to spare the connection (every waiter
         * then learns of its grant from the notice). A waiter sends one request per {@code inboxWait}, so it
         * is at least {@value #MIN_INBOX_WAIT_MILLIS} ms.
         *
         * @throws IllegalArgumentException naming the field and the value, unless zero or between {@value
         *     #MIN_INBOX_WAIT_MILLIS} ms and 1 minute
         */
        public Builder inboxWait(Duration inboxWait) {
            Objects.requireNonNull(inboxWait, "inboxWait");
            if (!inboxWait.isZero()
                    && (inboxWait.compareTo(Duration.ofMillis(MIN_INBOX_WAIT_MILLIS)) < 0
                            || inboxWait.compareTo(Duration.ofMinutes(1)) > 0)) {
                throw new IllegalArgumentException("inboxWait must be 0 (off) or between " + MIN_INBOX_WAIT_MILLIS
                        + " ms and 1 minute, was " + inboxWait);
            }
            this.inboxWait = inboxWait;
            return this;
        }

        /** The topology that owns the client (set by the factory for Sentinel). */
        Builder topology(RedisTopology topology) {
            this.topology = topology;
            return this;
        }

        /** Where the server is, for error messages (host:port); never include a password. */
        public Builder describedAs(String where) {
            this.where = Objects.requireNonNull(where, "where");
            return this;
        }

        /** The provider. */
        public RedisLockProvider build() {
            return new RedisLockProvider(this);
        }

        static String requireValidPrefix(String prefix) {
            if (prefix == null) {
                throw new IllegalArgumentException("keyPrefix must not be null");
            }
            if (prefix.length() > 64) {
                throw new IllegalArgumentException("keyPrefix must be at most 64 characters, was " + prefix.length());
            }
            for (int i = 0; i < prefix.length(); i++) {
                char c = prefix.charAt(i);
                if (c == '{' || c == '}' || Character.isISOControl(c)) {
                    throw new IllegalArgumentException(
                            "keyPrefix must not contain braces or control characters, was '" + prefix + "'");
                }
            }
            return prefix;
        }
    }
}
