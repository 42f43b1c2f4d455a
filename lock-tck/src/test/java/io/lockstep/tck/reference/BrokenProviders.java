package io.lockstep.tck.reference;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockException;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.LockState;
import io.lockstep.LockTimeoutException;
import io.lockstep.LossReason;
import io.lockstep.ProviderInfo;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.Extension;
import io.lockstep.spi.Grant;
import io.lockstep.spi.LockBackend;
import io.lockstep.spi.ReleaseWatch;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

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
        /** Only the first 100 characters of a name are used as the key. */
        NAME_PREFIX_ONLY,
        /** Locks are keyed by the name's 32-bit {@code String.hashCode()}. */
        NAME_HASHED_32,
        /** Accents are stripped from names ("résumé" and "resume" are one lock). */
        NAME_ACCENTS_FOLDED,
        /** Names are lower-cased, as a case-insensitive column or collation does. */
        NAME_CASE_FOLDED,
        /** Names are normalized to NFKC ("café" in NFC and NFD, "ﬁ" and "fi" are one lock). */
        NAME_NORMALIZED,
        /** Names are stripped of leading and trailing spaces. */
        NAME_TRIMMED,
        /** The 256 limit is counted in characters, and longer names are cut to 256 bytes. */
        NAME_LIMIT_IN_CHARS,
        /** release() and extend() refuse to run on a thread other than the one that acquired. */
        RELEASE_ON_ACQUIRING_THREAD_ONLY,
        /** acquire and tryAcquire wait twice their wait time. */
        WAITS_TWICE_THE_WAIT_TIME,
        /** A zero wait time is taken as "the default wait", one second. */
        ZERO_WAIT_WAITS,
        /** A waiter that is interrupted clears the flag and goes on waiting. */
        IGNORES_INTERRUPTS,
        /** A waiter that is interrupted stops, but clears its interrupt flag. */
        INTERRUPT_FLAG_CLEARED,
        /** close() forgets its leases without releasing them: their locks stay until their lease time. */
        CLOSE_LEAVES_LOCKS,
        /** close() frees the locks, but its leases still say they are valid and lost() never completes. */
        CLOSE_LEAVES_LEASES_VALID,
        /** close() releases the leases but a closed provider still grants new ones. */
        CLOSED_PROVIDER_GRANTS,
        /** release() checks the owner in one request and deletes the key in a second one. */
        TWO_STEP_RELEASE,
        /** A waiter subscribes to release signals only when it first waits, after its first attempt. */
        WATCH_SUBSCRIBES_LATE,
        /**
         * A failed attempt with an unknown outcome is neither retried nor abandoned: its lock stays until
         * its lease time.
         */
        ABANDON_NOTHING,
        /** A retried attempt does not recognise its own grant (SET NX without "or already mine"): busy. */
        RETRY_NOT_IDEMPOTENT,
        /** Validity is counted from the reply: the backend adds the call's duration to the grant. */
        VALIDITY_FROM_REPLY,
        /** Auto-renewal stops after the first renewal that fails. */
        RENEWAL_GIVES_UP_AFTER_ONE_ERROR,
        /** Auto-renewal renews when nine tenths of the lease have passed. */
        RENEWS_TOO_LATE,
        /** Owner tokens come from a counter. */
        PREDICTABLE_TOKENS,
        /** Owner tokens are two {@code nextLong()}s of a {@link java.util.Random}: they look random. */
        JAVA_UTIL_RANDOM_TOKENS,
        /** release() of one lease also frees every other lock the same client holds. */
        RELEASE_FREES_EVERY_LOCK_OF_THE_CLIENT,
        /**
         * remaining() always answers the time first granted and isValid() is "remaining() is positive": the
         * lease never counts down (issue 23: a kit loop waited on it for ever).
         */
        REMAINING_IGNORES_EXPIRY,
        /** Renewals are batched, and a batch extends only its first lease while reporting all extended. */
        EXTEND_ALL_FIRST_ONLY,
        /** The backend keeps a lock only for the whole seconds of its lease time (1.5 s is kept 1 s). */
        LEASE_ROUNDED_DOWN_TO_SECONDS,
        /**
         * release() checks that the lock is held by the releasing client (any lease it was granted), not by
         * the lease itself, as a backend that records a connection or session id as the owner does.
         */
        RELEASE_CHECKS_THE_CLIENT_NOT_THE_LEASE,
        /** inspect() reads the time left in milliseconds as seconds (a PTTL taken for a TTL). */
        INSPECT_REMAINING_IN_SECONDS,
        /** inspect() reports a stored lock as held whether or not it expired (a row read without its expiry). */
        INSPECT_IGNORES_EXPIRY,
        /** A zero wait tries once, then sleeps a poll interval (200 ms) before it gives up. */
        ZERO_WAIT_SLEEPS_A_POLL,
        /** lost() completes half a second after the lease expired. */
        LOST_LATE,
        /**
         * An extend that cannot reach the backend throws, but the lease counts itself extended anyway (the
         * request "probably got through").
         */
        EXTEND_UNREACHABLE_EXTENDS_LOCALLY,
        /** A release that cannot reach the backend throws and leaves the lease valid, its lost() pending. */
        RELEASE_UNREACHABLE_KEEPS_THE_LEASE,
        /** inspect() skips the name check: an invalid name is looked up, and found free. */
        INSPECT_ACCEPTS_INVALID_NAMES
    }

    private BrokenProviders() {}

    static LockProvider open(Mutation mutation, InMemoryLockStore store) {
        return open(mutation, store, LockRuntime.builder().clock(store.clock()));
    }

    /** As {@link #open(Mutation, InMemoryLockStore)}, on a runtime built from {@code builder}. */
    static LockProvider open(Mutation mutation, InMemoryLockStore store, LockRuntime.Builder builder) {
        if (mutation == Mutation.ABANDON_NOTHING) {
            builder.retryAttempts(1);
        }
        LockRuntime runtime = builder.build();
        return switch (mutation) {
            case RELEASE_WITHOUT_OWNER_CHECK,
                    NO_EXPIRY,
                    REPEATING_FENCES,
                    VALIDITY_LONGER_THAN_GRANTED,
                    NAME_PREFIX_ONLY,
                    NAME_HASHED_32,
                    NAME_ACCENTS_FOLDED,
                    NAME_CASE_FOLDED,
                    NAME_NORMALIZED,
                    NAME_TRIMMED,
                    TWO_STEP_RELEASE,
                    WATCH_SUBSCRIBES_LATE,
                    ABANDON_NOTHING,
                    RETRY_NOT_IDEMPOTENT,
                    VALIDITY_FROM_REPLY,
                    RELEASE_FREES_EVERY_LOCK_OF_THE_CLIENT,
                    EXTEND_ALL_FIRST_ONLY,
                    LEASE_ROUNDED_DOWN_TO_SECONDS,
                    RELEASE_CHECKS_THE_CLIENT_NOT_THE_LEASE,
                    INSPECT_REMAINING_IN_SECONDS,
                    INSPECT_IGNORES_EXPIRY ->
                new BackendLockProvider<>(new BrokenBackend(mutation, new InMemoryLockBackend(store, true)), runtime);
            case FAIL_OPEN_WHEN_DOWN,
                    LOST_NEVER_COMPLETES,
                    EXTEND_IGNORES_OWNERSHIP,
                    NAME_LIMIT_IN_CHARS,
                    RELEASE_ON_ACQUIRING_THREAD_ONLY,
                    WAITS_TWICE_THE_WAIT_TIME,
                    ZERO_WAIT_WAITS,
                    IGNORES_INTERRUPTS,
                    INTERRUPT_FLAG_CLEARED,
                    CLOSE_LEAVES_LOCKS,
                    CLOSE_LEAVES_LEASES_VALID,
                    CLOSED_PROVIDER_GRANTS,
                    RENEWAL_GIVES_UP_AFTER_ONE_ERROR,
                    RENEWS_TOO_LATE,
                    PREDICTABLE_TOKENS,
                    JAVA_UTIL_RANDOM_TOKENS,
                    REMAINING_IGNORES_EXPIRY,
                    ZERO_WAIT_SLEEPS_A_POLL,
                    LOST_LATE,
                    EXTEND_UNREACHABLE_EXTENDS_LOCALLY,
                    RELEASE_UNREACHABLE_KEEPS_THE_LEASE ->
                new BrokenProvider(mutation, new InMemoryLockProvider(store, runtime));
            case INSPECT_ACCEPTS_INVALID_NAMES ->
                new BrokenProvider(mutation, new InMemoryLockProvider(store, runtime, true));
        };
    }

    /** The key a broken backend uses for {@code name}. */
    private static String key(Mutation mutation, String name) {
        return switch (mutation) {
            case NAME_PREFIX_ONLY -> name.substring(0, Math.min(name.length(), 100));
            case NAME_HASHED_32 -> "h" + Integer.toHexString(name.hashCode());
            case NAME_ACCENTS_FOLDED ->
                Normalizer.normalize(name, Normalizer.Form.NFD).replaceAll("\\p{M}", "");
            case NAME_CASE_FOLDED -> name.toLowerCase(Locale.ROOT);
            case NAME_NORMALIZED -> Normalizer.normalize(name, Normalizer.Form.NFKC);
            case NAME_TRIMMED -> name.strip();
            default -> name;
        };
    }

    private static final class BrokenBackend implements LockBackend<InMemoryLockBackend.Handle> {
        private static final Duration FOREVER = Duration.ofDays(365);
        private final Set<String> tried = ConcurrentHashMap.newKeySet();
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
            if (mutation == Mutation.RETRY_NOT_IDEMPOTENT
                    && !tried.add(name + "\u0000" + ownerToken)
                    && delegate.store().isHeldBy(delegate.connection(), key(mutation, name), ownerToken)) {
                return Attempt.busy(Duration.ofSeconds(1)); // "someone" holds it: ourselves
            }
            long sent = System.nanoTime();
            Attempt<InMemoryLockBackend.Handle> attempt =
                    delegate.tryLock(key(mutation, name), ownerToken, kept(leaseTime));
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
                case VALIDITY_FROM_REPLY ->
                    Attempt.granted(Grant.of(
                            grant.handle(), grant.fencingToken(), leaseTime.plusNanos(System.nanoTime() - sent)));
                case LEASE_ROUNDED_DOWN_TO_SECONDS ->
                    Attempt.granted(Grant.of(grant.handle(), grant.fencingToken(), leaseTime));
                default -> attempt;
            };
        }

        /** How long the broken backend keeps a lock asked for {@code leaseTime}. */
        private Duration kept(Duration leaseTime) {
            return switch (mutation) {
                case NO_EXPIRY -> FOREVER;
                case LEASE_ROUNDED_DOWN_TO_SECONDS ->
                    leaseTime.compareTo(Duration.ofSeconds(1)) < 0
                            ? leaseTime
                            : Duration.ofSeconds(leaseTime.getSeconds());
                default -> leaseTime;
            };
        }

        @Override
        public int maxRenewalBatch() {
            return mutation == Mutation.EXTEND_ALL_FIRST_ONLY ? 16 : delegate.maxRenewalBatch();
        }

        @Override
        public List<Optional<Duration>> extendAll(List<Extension<InMemoryLockBackend.Handle>> extensions) {
            if (mutation != Mutation.EXTEND_ALL_FIRST_ONLY || extensions.isEmpty()) {
                return LockBackend.super.extendAll(extensions);
            }
            List<Optional<Duration>> results = new ArrayList<>();
            results.add(extend(extensions.get(0).handle(), extensions.get(0).leaseTime()));
            for (int i = 1; i < extensions.size(); i++) {
                results.add(Optional.of(extensions.get(i).leaseTime()));
            }
            return results;
        }

        @Override
        public Optional<Duration> extend(InMemoryLockBackend.Handle handle, Duration leaseTime) {
            if (mutation == Mutation.NO_EXPIRY) {
                return delegate.extend(handle, FOREVER).map(d -> leaseTime);
            }
            long sent = System.nanoTime();
            Optional<Duration> extended = delegate.extend(handle, kept(leaseTime));
            if (mutation == Mutation.LEASE_ROUNDED_DOWN_TO_SECONDS) {
                return extended.map(d -> leaseTime);
            }
            if (mutation == Mutation.VALIDITY_FROM_REPLY) {
                return extended.map(d -> d.plusNanos(System.nanoTime() - sent));
            }
            return extended;
        }

        @Override
        public boolean release(InMemoryLockBackend.Handle handle) {
            if (mutation == Mutation.RELEASE_WITHOUT_OWNER_CHECK) {
                boolean held = delegate.store().isHeld(handle.lock());
                delegate.store().forceRelease(delegate.connection(), handle.lock());
                return held;
            }
            if (mutation == Mutation.TWO_STEP_RELEASE) {
                // GET, compare, then DEL: the key may have expired and been taken in between.
                if (!delegate.store().isHeldBy(delegate.connection(), handle.lock(), handle.owner())) {
                    return false;
                }
                delegate.store().forceRelease(delegate.connection(), handle.lock());
                return true;
            }
            if (mutation == Mutation.RELEASE_CHECKS_THE_CLIENT_NOT_THE_LEASE) {
                // An atomic compare-and-delete, but on "held by this client": any of its grants on the lock.
                Set<String> ours = new HashSet<>();
                ours.add(handle.owner());
                for (InMemoryLockBackend.Handle mine : granted) {
                    if (mine.lock().equals(handle.lock())) {
                        ours.add(mine.owner());
                    }
                }
                granted.remove(handle);
                return delegate.store().releaseIfHeldByAnyOf(delegate.connection(), handle.lock(), ours);
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
            if (mutation != Mutation.ABANDON_NOTHING) {
                delegate.abandon(key(mutation, name), ownerToken);
            }
        }

        @Override
        public ReleaseWatch watch(String name) {
            String key = key(mutation, name);
            if (mutation == Mutation.WATCH_SUBSCRIBES_LATE) {
                return new LateWatch(() -> delegate.watch(key));
            }
            return delegate.watch(key);
        }

        @Override
        public Optional<LockState> inspect(String name) {
            String key = key(mutation, name);
            if (mutation == Mutation.INSPECT_IGNORES_EXPIRY) {
                OptionalLong stored = delegate.store().storedFence(key);
                if (stored.isPresent()) {
                    return Optional.of(new LockState(true, stored, Optional.empty()));
                }
            }
            Optional<LockState> state = delegate.inspect(key);
            if (mutation == Mutation.INSPECT_REMAINING_IN_SECONDS) {
                return state.map(s -> new LockState(
                        s.held(), s.fencingToken(), s.remaining().map(left -> Duration.ofSeconds(left.toMillis()))));
            }
            return state;
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

    /** Subscribes on its first wait, not when created: a release before that wait is missed. */
    private static final class LateWatch implements ReleaseWatch {
        private final Supplier<ReleaseWatch> subscribe;
        private @Nullable ReleaseWatch watch;

        LateWatch(Supplier<ReleaseWatch> subscribe) {
            this.subscribe = subscribe;
        }

        @Override
        public boolean await(Duration timeout) throws InterruptedException {
            ReleaseWatch w = watch;
            if (w == null) {
                long start = System.nanoTime();
                w = subscribe.get();
                watch = w;
                timeout = timeout.minusNanos(System.nanoTime() - start);
            }
            return w.await(timeout.isNegative() ? Duration.ZERO : timeout);
        }

        @Override
        public void close() {
            ReleaseWatch w = watch;
            if (w != null) {
                w.close();
            }
        }
    }

    private static final class BrokenProvider implements LockProvider {
        private static final AtomicLong COUNTER = new AtomicLong();
        private static final Random RANDOM = new Random();
        private final Mutation mutation;
        private final InMemoryLockProvider delegate;
        private final Set<BrokenLease> leases = ConcurrentHashMap.newKeySet();
        private final ScheduledExecutorService renewals = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "broken-renewal");
            t.setDaemon(true);
            return t;
        });
        private volatile boolean closed;

        BrokenProvider(Mutation mutation, InMemoryLockProvider delegate) {
            this.mutation = mutation;
            this.delegate = delegate;
        }

        @Override
        public Optional<Lease> tryAcquire(String name, LeaseOptions options) {
            try {
                return acquireWithin(name, options);
            } catch (BackendUnavailableException e) {
                if (mutation == Mutation.FAIL_OPEN_WHEN_DOWN) {
                    return Optional.of(new PhantomLease(name, options.leaseTime()));
                }
                throw e;
            }
        }

        @Override
        public Lease acquire(String name, LeaseOptions options) {
            return tryAcquire(name, options)
                    .orElseThrow(() ->
                            new LockTimeoutException("lock '" + name + "' still held after " + options.waitTime()));
        }

        private Optional<Lease> acquireWithin(String name, LeaseOptions options) {
            if (closed && mutation != Mutation.CLOSED_PROVIDER_GRANTS) {
                throw new IllegalStateException("closed");
            }
            String target = name;
            if (mutation == Mutation.NAME_LIMIT_IN_CHARS && name.length() <= 256) {
                target = cutToBytes(name, 256); // what a VARCHAR(256) counted in characters keeps
            }
            LeaseOptions forDelegate = options;
            Duration wait = options.waitTime();
            if (mutation == Mutation.WAITS_TWICE_THE_WAIT_TIME) {
                forDelegate = forDelegate.withWaitTime(wait.multipliedBy(2));
            } else if (mutation == Mutation.ZERO_WAIT_WAITS && wait.isZero()) {
                forDelegate = forDelegate.withWaitTime(Duration.ofSeconds(1));
            }
            boolean selfRenewing = options.autoRenew()
                    && (mutation == Mutation.RENEWAL_GIVES_UP_AFTER_ONE_ERROR || mutation == Mutation.RENEWS_TOO_LATE);
            if (selfRenewing) {
                forDelegate = LeaseOptions.of(options.leaseTime()).withWaitTime(forDelegate.waitTime());
            }
            Optional<Lease> got = interruptibly(target, forDelegate);
            if (got.isEmpty() && wait.isZero() && mutation == Mutation.ZERO_WAIT_SLEEPS_A_POLL) {
                // "Try again in a moment" even though the caller asked for one try.
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new LockException("interrupted", e);
                }
            }
            if (got.isEmpty() || mutation == Mutation.FAIL_OPEN_WHEN_DOWN) {
                return got;
            }
            BrokenLease lease = new BrokenLease(mutation, got.get(), leases);
            leases.add(lease);
            if (selfRenewing) {
                lease.renewEvery(renewals, options.leaseTime());
            }
            return Optional.of(lease);
        }

        private Optional<Lease> interruptibly(String name, LeaseOptions options) {
            long deadline = System.nanoTime() + options.waitTime().toNanos();
            while (true) {
                try {
                    return delegate.tryAcquire(name, options);
                } catch (LockException e) {
                    if (!(e.getCause() instanceof InterruptedException) || e instanceof BackendUnavailableException) {
                        throw e;
                    }
                    if (mutation == Mutation.INTERRUPT_FLAG_CLEARED) {
                        Thread.interrupted();
                        throw e;
                    }
                    if (mutation != Mutation.IGNORES_INTERRUPTS) {
                        throw e;
                    }
                    Thread.interrupted(); // "spurious": wait on
                    long left = deadline - System.nanoTime();
                    options = options.withWaitTime(Duration.ofNanos(Math.max(0, left)));
                }
            }
        }

        @Override
        public ProviderInfo info() {
            return delegate.info();
        }

        @Override
        public Optional<LockState> inspect(String name) {
            if (mutation != Mutation.INSPECT_ACCEPTS_INVALID_NAMES) {
                return delegate.inspect(name);
            }
            try {
                return delegate.inspect(name);
            } catch (IllegalArgumentException invalid) {
                // A key nobody could have written: "free".
                return Optional.of(new LockState(false, OptionalLong.empty(), Optional.empty()));
            }
        }

        @Override
        public void close() {
            closed = true;
            renewals.shutdownNow();
            switch (mutation) {
                case CLOSE_LEAVES_LOCKS -> List.copyOf(leases).forEach(BrokenLease::forget);
                case CLOSE_LEAVES_LEASES_VALID -> delegate.close();
                case CLOSED_PROVIDER_GRANTS -> List.copyOf(leases).forEach(BrokenLease::close);
                default -> delegate.close();
            }
        }
    }

    private static String cutToBytes(String name, int bytes) {
        String cut = name;
        while (cut.getBytes(StandardCharsets.UTF_8).length > bytes) {
            cut = cut.substring(0, cut.length() - 1);
        }
        return cut;
    }

    private static final class BrokenLease implements Lease {
        private final Mutation mutation;
        private final Lease delegate;
        private final Set<BrokenLease> live;
        private final Thread acquiredOn = Thread.currentThread();
        private final CompletableFuture<LossReason> own = new CompletableFuture<>();
        private final @Nullable CompletionStage<LossReason> late;
        private final long ownDeadline;
        private final Duration granted;
        private final String token;
        private volatile boolean forgotten;
        private volatile boolean releasedByUser;
        /** Nonzero once a failed extend was counted as done (EXTEND_UNREACHABLE_EXTENDS_LOCALLY). */
        private volatile long extendedLocallyUntil;
        /** A release failed and the lease went on as if held (RELEASE_UNREACHABLE_KEEPS_THE_LEASE). */
        private volatile boolean keptAfterFailedRelease;

        BrokenLease(Mutation mutation, Lease delegate, Set<BrokenLease> live) {
            this.mutation = mutation;
            this.delegate = delegate;
            this.live = live;
            this.granted = delegate.remaining();
            this.ownDeadline = System.nanoTime() + granted.toNanos();
            // A loss found by a sweep that runs half a second behind: every reason but a release comes late.
            this.late = mutation != Mutation.LOST_LATE
                    ? null
                    : delegate.lost()
                            .thenCompose(r -> r == LossReason.RELEASED
                                    ? CompletableFuture.completedFuture(r)
                                    : CompletableFuture.supplyAsync(
                                            () -> r, CompletableFuture.delayedExecutor(500, TimeUnit.MILLISECONDS)));
            this.token = switch (mutation) {
                case PREDICTABLE_TOKENS -> String.format("%032x", BrokenProvider.COUNTER.incrementAndGet());
                case JAVA_UTIL_RANDOM_TOKENS -> randomTokens();
                default -> delegate.ownerToken();
            };
        }

        // A method of its own: javac 17 emits unverifiable bytecode for a synchronized block inside a
        // switch expression in a constructor (VerifyError: stack map does not match).
        private static String randomTokens() {
            synchronized (BrokenProvider.RANDOM) {
                return String.format("%016x%016x", BrokenProvider.RANDOM.nextLong(), BrokenProvider.RANDOM.nextLong());
            }
        }

        /** The provider's own renewal, the way the mutation gets it wrong. */
        void renewEvery(ScheduledExecutorService scheduler, Duration leaseTime) {
            long delay = mutation == Mutation.RENEWS_TOO_LATE ? leaseTime.toNanos() * 9 / 10 : leaseTime.toNanos() / 3;
            scheduler.schedule(
                    () -> {
                        try {
                            if (delegate.extend(leaseTime)) {
                                renewEvery(scheduler, leaseTime);
                            }
                        } catch (IllegalStateException released) {
                            // released meanwhile
                        } catch (RuntimeException e) {
                            if (mutation != Mutation.RENEWAL_GIVES_UP_AFTER_ONE_ERROR) {
                                renewEvery(scheduler, leaseTime);
                            }
                        }
                    },
                    delay,
                    TimeUnit.NANOSECONDS);
        }

        /** Drops the lease from the provider without telling the backend (CLOSE_LEAVES_LOCKS). */
        void forget() {
            forgotten = true;
            live.remove(this);
            own.complete(LossReason.RELEASED);
        }

        private boolean ownView() {
            return mutation == Mutation.CLOSE_LEAVES_LEASES_VALID || forgotten || keptAfterFailedRelease;
        }

        private void requireAcquiringThread() {
            if (mutation == Mutation.RELEASE_ON_ACQUIRING_THREAD_ONLY && Thread.currentThread() != acquiredOn) {
                throw new IllegalMonitorStateException("lease of '" + name() + "' is owned by " + acquiredOn);
            }
        }

        @Override
        public String name() {
            return delegate.name();
        }

        @Override
        public String ownerToken() {
            return token;
        }

        @Override
        public OptionalLong fencingToken() {
            return delegate.fencingToken();
        }

        @Override
        public Duration remaining() {
            if (mutation == Mutation.REMAINING_IGNORES_EXPIRY) {
                return releasedByUser ? Duration.ZERO : granted;
            }
            long extended = extendedLocallyUntil;
            if (extended != 0) {
                return Duration.ofNanos(Math.max(0, extended - System.nanoTime()));
            }
            if (ownView()) {
                return isValid() ? Duration.ofNanos(ownDeadline - System.nanoTime()) : Duration.ZERO;
            }
            return delegate.remaining();
        }

        @Override
        public boolean isValid() {
            if (mutation == Mutation.REMAINING_IGNORES_EXPIRY) {
                return !remaining().isZero() && !remaining().isNegative();
            }
            long extended = extendedLocallyUntil;
            if (extended != 0) {
                return !releasedByUser && extended - System.nanoTime() > 0;
            }
            if (ownView()) {
                return !forgotten && !releasedByUser && ownDeadline - System.nanoTime() > 0;
            }
            return delegate.isValid();
        }

        @Override
        public boolean extend(Duration leaseTime) {
            requireAcquiringThread();
            boolean extended;
            try {
                extended = delegate.extend(leaseTime);
            } catch (BackendUnavailableException e) {
                if (mutation == Mutation.EXTEND_UNREACHABLE_EXTENDS_LOCALLY) {
                    extendedLocallyUntil = System.nanoTime() + leaseTime.toNanos();
                }
                throw e;
            }
            return mutation == Mutation.EXTEND_IGNORES_OWNERSHIP || extended;
        }

        @Override
        public boolean release() {
            requireAcquiringThread();
            if (mutation == Mutation.RELEASE_UNREACHABLE_KEEPS_THE_LEASE) {
                try {
                    boolean released = delegate.release();
                    live.remove(this);
                    releasedByUser = true;
                    own.complete(LossReason.RELEASED);
                    return released;
                } catch (BackendUnavailableException e) {
                    keptAfterFailedRelease = true; // "still ours until it expires"
                    throw e;
                }
            }
            live.remove(this);
            releasedByUser = true;
            own.complete(LossReason.RELEASED);
            return delegate.release();
        }

        @Override
        public void close() {
            live.remove(this);
            releasedByUser = true;
            own.complete(LossReason.RELEASED);
            delegate.close();
        }

        @Override
        public CompletionStage<LossReason> lost() {
            if (mutation == Mutation.LOST_NEVER_COMPLETES) {
                return new CompletableFuture<>();
            }
            if (late != null) {
                return late;
            }
            return ownView() ? own : delegate.lost();
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
