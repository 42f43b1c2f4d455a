package io.lockstep.etcd;

import io.etcd.jetcd.Client;
import io.lockstep.LockRuntime;
import io.lockstep.etcd.internal.EtcdBackend;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.ForwardingLockProvider;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Locks on etcd v3 through jetcd, taken the way etcd's concurrency mutex takes them: a key under the
 * lock's prefix bound to an etcd lease, ordered by create revision; the lowest key holds the lock, its
 * create revision is the fencing token, and each waiter watches only the deletion of the key before
 * its own, so waiters are served in the order they queued ({@link io.lockstep.Capability#FAIR}) and a
 * release wakes exactly one of them.
 *
 * <p>Tier {@link io.lockstep.StrengthTier#CONSENSUS}: every grant is a linearizable etcd transaction,
 * so exclusion and fences survive the loss of a minority of members, a leader change and a restart.
 * Leases: one etcd lease per provider and lease-time class (TTL 1.5 × the lease time in whole seconds)
 * with one keep-alive each; a grant's validity is exactly the lease time asked, tracked client-side and
 * capped by what the session is known to last, less a clock drift allowance ({@link Builder#driftFactor}).
 * See the module README for what is and is not guaranteed.
 *
 * <p>Closing it releases the leases it still holds, revokes its sessions and closes the client if
 * {@link Builder#closeClient} was set. Thread-safe.
 *
 * <pre>{@code
 * Client client = Client.builder().endpoints("http://h1:2379", "http://h2:2379").build();
 * try (LockProvider locks = EtcdLockProvider.builder(client).keyPrefix("app1/").build()) { ... }
 * }</pre>
 */
public final class EtcdLockProvider extends ForwardingLockProvider {

    /** The default key prefix. */
    public static final String DEFAULT_KEY_PREFIX = "lockstep/";
    /** The default bound of one round trip. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);

    private final EtcdBackend backend;

    private EtcdLockProvider(EtcdBackend backend, LockRuntime runtime) {
        super(new BackendLockProvider<>(backend, runtime));
        this.backend = backend;
    }

    /** A builder over an existing jetcd {@code client}. */
    public static Builder builder(Client client) {
        return new Builder(client);
    }

    /**
     * The ids of the etcd leases this provider's locks are bound to right now (one per lease-time class
     * in use), for operations and fault tests: revoking one ends every lock held through it.
     */
    public List<Long> sessionLeaseIds() {
        return backend.sessionLeaseIds();
    }

    /** Builds an {@link EtcdLockProvider}. */
    public static final class Builder {
        private final Client client;
        private String keyPrefix = DEFAULT_KEY_PREFIX;
        private LockRuntime runtime = LockRuntime.defaults();
        private boolean closeClient;
        private Duration timeout = DEFAULT_TIMEOUT;
        private String where = "(client supplied)";
        private double driftFactor = ClockDrift.DEFAULT_FACTOR;

        private Builder(Client client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /**
         * The prefix of every key (default {@value #DEFAULT_KEY_PREFIX}): 1 to 128 characters, no control
         * characters. Different applications sharing one etcd should use different prefixes.
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = requireValidPrefix(keyPrefix);
            return this;
        }

        /** The runtime (clock, scheduler, metrics, retry). */
        public Builder runtime(LockRuntime runtime) {
            this.runtime = Objects.requireNonNull(runtime, "runtime");
            return this;
        }

        /** The longest one round trip to etcd may take (default 2 s); between 1 ms and 5 minutes. */
        public Builder timeout(Duration timeout) {
            this.timeout = requireValidTimeout(timeout);
            return this;
        }

        /**
         * The clock drift allowance as a fraction of the session lease's TTL, in [0, 0.5), default 0.01:
         * etcd counts the TTL on the leader's clock, which may run faster than ours, so what the session is
         * known to last (the cap on every grant's validity) is the last keep-alive's send time plus {@code
         * TTL − (TTL × driftFactor + 2 ms)} (see {@link ClockDrift}). Declared as {@code
         * ClockAssumption.rateDrift(driftFactor)}.
         *
         * @throws IllegalArgumentException naming {@code driftFactor} and the value if it is outside [0, 0.5)
         *     or not a number
         */
        public Builder driftFactor(double driftFactor) {
            this.driftFactor = ClockDrift.requireFactor(driftFactor);
            return this;
        }

        /** Whether closing the provider closes the jetcd client too (default false: the caller owns it). */
        public Builder closeClient(boolean closeClient) {
            this.closeClient = closeClient;
            return this;
        }

        /** Where etcd is, for error messages (host:port list); never include a password. */
        public Builder describedAs(String where) {
            this.where = Objects.requireNonNull(where, "where");
            return this;
        }

        /** The provider. */
        public EtcdLockProvider build() {
            return new EtcdLockProvider(
                    new EtcdBackend(client, closeClient, keyPrefix, where, timeout, runtime, driftFactor), runtime);
        }

        static String requireValidPrefix(String prefix) {
            return io.lockstep.etcd.internal.EtcdKeys.requireValidPrefix(prefix);
        }

        static Duration requireValidTimeout(Duration timeout) {
            if (timeout == null) {
                throw new IllegalArgumentException("timeout must not be null");
            }
            if (timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
                throw new IllegalArgumentException("timeout must be between 1 ms and 5 minutes, was " + timeout);
            }
            return timeout;
        }
    }
}
