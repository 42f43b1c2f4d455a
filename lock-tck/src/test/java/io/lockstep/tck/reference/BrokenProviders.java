package io.lockstep.tck.reference;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.LossReason;
import io.lockstep.ProviderInfo;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.Grant;
import io.lockstep.spi.LockBackend;
import io.lockstep.spi.ReleaseWatch;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/** The reference provider with one deliberate bug each: the kit must catch every one. */
final class BrokenProviders {

    /** One bug. */
    enum Mutation {
        /** release() frees the lock whoever holds it. */
        RELEASE_WITHOUT_OWNER_CHECK,
        /** The backend never expires a lock, though leases report their lease time. */
        NO_EXPIRY,
        /** Every grant gets the same fencing token. */
        REPEATING_FENCES,
        /** When the backend cannot be reached, acquiring "succeeds" with a lease nobody granted. */
        FAIL_OPEN_WHEN_DOWN,
        /** lost() never completes, not even on release. */
        LOST_NEVER_COMPLETES,
        /** extend() reports success whether or not the lease still owns the lock. */
        EXTEND_IGNORES_OWNERSHIP,
        /** Leases believe they are valid three times longer than the backend keeps the lock. */
        VALIDITY_LONGER_THAN_GRANTED,
        /** release() of one lease also frees every other lock the same client holds. */
        RELEASE_FREES_EVERY_LOCK_OF_THE_CLIENT
    }

    private BrokenProviders() {}

    static LockProvider open(Mutation mutation, InMemoryLockStore store) {
        LockRuntime runtime = LockRuntime.builder().clock(store.clock()).build();
        return switch (mutation) {
            case RELEASE_WITHOUT_OWNER_CHECK,
                    NO_EXPIRY,
                    REPEATING_FENCES,
                    VALIDITY_LONGER_THAN_GRANTED,
                    RELEASE_FREES_EVERY_LOCK_OF_THE_CLIENT ->
                new BackendLockProvider<>(new BrokenBackend(mutation, new InMemoryLockBackend(store)), runtime);
            case FAIL_OPEN_WHEN_DOWN, LOST_NEVER_COMPLETES, EXTEND_IGNORES_OWNERSHIP ->
                new BrokenProvider(mutation, new InMemoryLockProvider(store, runtime));
        };
    }

    private static final class BrokenBackend implements LockBackend<InMemoryLockBackend.Handle> {
        private static final Duration FOREVER = Duration.ofDays(365);
        private final Mutation mutation;
        private final InMemoryLockBackend delegate;
        private final Set<InMemoryLockBackend.Handle> granted = ConcurrentHashMap.newKeySet();

        BrokenBackend(Mutation mutation, InMemoryLockBackend delegate) {
            this.mutation = mutation;
            this.delegate = delegate;
        }

        @Override
        public ProviderInfo info() {
            return delegate.info();
        }

        @Override
        public Attempt<InMemoryLockBackend.Handle> tryLock(String name, String ownerToken, Duration leaseTime) {
            Attempt<InMemoryLockBackend.Handle> attempt =
                    delegate.tryLock(name, ownerToken, mutation == Mutation.NO_EXPIRY ? FOREVER : leaseTime);
            if (!attempt.isGranted()) {
                return attempt;
            }
            Grant<InMemoryLockBackend.Handle> grant = attempt.grant();
            granted.add(grant.handle());
            return switch (mutation) {
                case NO_EXPIRY -> Attempt.granted(Grant.of(grant.handle(), grant.fencingToken(), leaseTime));
                case REPEATING_FENCES -> Attempt.granted(Grant.of(grant.handle(), OptionalLong.of(1), leaseTime));
                case VALIDITY_LONGER_THAN_GRANTED ->
                    Attempt.granted(Grant.of(grant.handle(), grant.fencingToken(), leaseTime.multipliedBy(3)));
                default -> attempt;
            };
        }

        @Override
        public Optional<Duration> extend(InMemoryLockBackend.Handle handle, Duration leaseTime) {
            if (mutation == Mutation.NO_EXPIRY) {
                return delegate.extend(handle, FOREVER).map(d -> leaseTime);
            }
            return delegate.extend(handle, leaseTime);
        }

        @Override
        public boolean release(InMemoryLockBackend.Handle handle) {
            if (mutation == Mutation.RELEASE_WITHOUT_OWNER_CHECK) {
                boolean held = delegate.store().isHeld(handle.lock());
                delegate.store().forceRelease(handle.lock());
                return held;
            }
            if (mutation == Mutation.RELEASE_FREES_EVERY_LOCK_OF_THE_CLIENT) {
                // As a backend keyed by client (one session per connection) would: everything goes at once.
                boolean released = delegate.release(handle);
                for (InMemoryLockBackend.Handle other : granted) {
                    delegate.release(other);
                }
                granted.clear();
                return released;
            }
            return delegate.release(handle);
        }

        @Override
        public void abandon(String name, String ownerToken) {
            delegate.abandon(name, ownerToken);
        }

        @Override
        public ReleaseWatch watch(String name) {
            return delegate.watch(name);
        }

        @Override
        public String describe() {
            return "broken (" + mutation + ") " + delegate.describe();
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    private static final class BrokenProvider implements LockProvider {
        private final Mutation mutation;
        private final InMemoryLockProvider delegate;

        BrokenProvider(Mutation mutation, InMemoryLockProvider delegate) {
            this.mutation = mutation;
            this.delegate = delegate;
        }

        @Override
        public Optional<Lease> tryAcquire(String name, LeaseOptions options) {
            try {
                return delegate.tryAcquire(name, options).map(this::wrap);
            } catch (BackendUnavailableException e) {
                if (mutation == Mutation.FAIL_OPEN_WHEN_DOWN) {
                    return Optional.of(new PhantomLease(name, options.leaseTime()));
                }
                throw e;
            }
        }

        @Override
        public Lease acquire(String name, LeaseOptions options) {
            try {
                return wrap(delegate.acquire(name, options));
            } catch (BackendUnavailableException e) {
                if (mutation == Mutation.FAIL_OPEN_WHEN_DOWN) {
                    return new PhantomLease(name, options.leaseTime());
                }
                throw e;
            }
        }

        private Lease wrap(Lease lease) {
            return mutation == Mutation.FAIL_OPEN_WHEN_DOWN ? lease : new BrokenLease(mutation, lease);
        }

        @Override
        public ProviderInfo info() {
            return delegate.info();
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    private static final class BrokenLease implements Lease {
        private final Mutation mutation;
        private final Lease delegate;
        private final CompletableFuture<LossReason> never = new CompletableFuture<>();

        BrokenLease(Mutation mutation, Lease delegate) {
            this.mutation = mutation;
            this.delegate = delegate;
        }

        @Override
        public String name() {
            return delegate.name();
        }

        @Override
        public String ownerToken() {
            return delegate.ownerToken();
        }

        @Override
        public OptionalLong fencingToken() {
            return delegate.fencingToken();
        }

        @Override
        public Duration remaining() {
            return delegate.remaining();
        }

        @Override
        public boolean isValid() {
            return delegate.isValid();
        }

        @Override
        public boolean extend(Duration leaseTime) {
            boolean extended = delegate.extend(leaseTime);
            return mutation == Mutation.EXTEND_IGNORES_OWNERSHIP || extended;
        }

        @Override
        public boolean release() {
            return delegate.release();
        }

        @Override
        public void close() {
            delegate.close();
        }

        @Override
        public CompletionStage<LossReason> lost() {
            return mutation == Mutation.LOST_NEVER_COMPLETES ? never : delegate.lost();
        }
    }

    /** The lease a fail-open provider invents when it could not reach the backend. */
    private static final class PhantomLease implements Lease {
        private final String name;
        private final long deadline;
        private final CompletableFuture<LossReason> lost = new CompletableFuture<>();
        private boolean released;

        PhantomLease(String name, Duration leaseTime) {
            this.name = name;
            this.deadline = System.nanoTime() + leaseTime.toNanos();
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String ownerToken() {
            return "00000000000000000000000000000000";
        }

        @Override
        public OptionalLong fencingToken() {
            return OptionalLong.of(Long.MAX_VALUE);
        }

        @Override
        public Duration remaining() {
            return isValid() ? Duration.ofNanos(deadline - System.nanoTime()) : Duration.ZERO;
        }

        @Override
        public synchronized boolean isValid() {
            return !released && deadline - System.nanoTime() > 0;
        }

        @Override
        public boolean extend(Duration leaseTime) {
            return true;
        }

        @Override
        public synchronized boolean release() {
            released = true;
            lost.complete(LossReason.RELEASED);
            return true;
        }

        @Override
        public void close() {
            release();
        }

        @Override
        public CompletionStage<LossReason> lost() {
            return lost;
        }
    }
}
