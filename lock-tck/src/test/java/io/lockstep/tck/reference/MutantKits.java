package io.lockstep.tck.reference;

import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.Locks;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.clockstore.ClockStoreServer;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.LocalServerFaults;
import io.lockstep.tck.reference.BrokenProviders.Mutation;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The kit against the reference provider with one bug each. None is a test on its own: nested classes
 * are not run by the build, {@link KitMutationTest} launches them and expects them to fail.
 */
final class MutantKits {

    private MutantKits() {}

    /** The kit against the reference provider with a mutation applied (none: the control). */
    abstract static class MutantKit extends LockProviderCompatibilityKit {

        private final InMemoryLockStore store = new InMemoryLockStore();
        private final @Nullable Mutation mutation;

        MutantKit(@Nullable Mutation mutation) {
            this.mutation = mutation;
        }

        @Override
        protected LockProvider newProvider() {
            return mutation == null ? InMemoryLockProvider.inspecting(store) : BrokenProviders.open(mutation, store);
        }

        @Override
        protected BackendFaults faults() {
            return store.faults();
        }

        /** A provider on this kit's store whose backend queues waiters, first-come or last-come first. */
        final LockProvider fairQueue(boolean lastFirst) {
            return new BackendLockProvider<>(
                    new FairQueueBackend(new InMemoryLockBackend(store), lastFirst),
                    LockRuntime.builder().clock(store.clock()).build());
        }
    }

    /**
     * The kit against the raw-RESP fixture on a real redis-server (started once, stopped by {@link
     * #stopRedis()}), declaring a clock drift of 30%, with holders in child JVMs: the clock group runs a
     * holder on a clock slowed by libfaketime, which the in-memory reference cannot share a store with.
     */
    abstract static class RespDriftKit extends LockProviderCompatibilityKit {
        private static @Nullable RedisServer redis;
        private final String extra;

        RespDriftKit(String extra) {
            this.extra = extra;
        }

        private synchronized String uri() {
            synchronized (RespDriftKit.class) {
                if (redis == null) {
                    redis = RedisServer.start();
                }
                return "resp://127.0.0.1:" + redis.port() + "?timeout=500ms&driftFactor=0.3" + extra;
            }
        }

        static void stopRedis() {
            synchronized (RespDriftKit.class) {
                if (redis != null) {
                    redis.close();
                    redis = null;
                }
            }
        }

        @Override
        protected LockProvider newProvider() {
            return Locks.open(uri());
        }

        @Override
        protected Optional<String> childJvmUri() {
            return Optional.of(uri());
        }
    }

    /** Leaves 30% of the lease for drift, as it declares. */
    static final class RespDriftReference extends RespDriftKit {
        RespDriftReference() {
            super("");
        }
    }

    /** Declares a drift of 30% but counts validity as the whole lease: a server clock 24% fast ends the lock first. */
    static final class IgnoresDrift extends RespDriftKit {
        IgnoresDrift() {
            super("&ignoresDrift=true");
        }

        /**
         * A 4 s lease: the 24% by which this provider overstates validity is then about a second, which a
         * starved machine's round trips and the kit's conservative reading of the holder's time left do not
         * hide. With the kit's 1 s it is 240 ms, and R26 (two busy loops beside the suite) saw no overlap.
         */
        @Override
        protected Duration shortLease() {
            return timing.millis(4_000);
        }
    }

    /**
     * The kit against the clock-store fixture on a {@link ClockStoreServer} (a Java server in a child JVM,
     * started once, stopped by {@link #stopServer()}), declaring a clock drift of 30%, with holders in child
     * JVMs and {@code SERVER_CLOCK}: libfaketime reaches a JVM, so the server-clock checks run, which they
     * cannot on the raw-RESP fixture's redis-server. With {@code wallClockOffset} the store compares
     * wall-clock timestamps, so the offset contender is given an offset within the one it declares.
     */
    abstract static class ClockStoreKit extends LockProviderCompatibilityKit {
        private static @Nullable ClockStoreServer server;
        private final String extra;

        ClockStoreKit(String extra) {
            this.extra = extra;
        }

        private static ClockStoreServer server() {
            synchronized (ClockStoreKit.class) {
                if (server == null) {
                    server = ClockStoreServer.start();
                }
                return server;
            }
        }

        static void stopServer() {
            synchronized (ClockStoreKit.class) {
                if (server != null) {
                    server.close();
                    server = null;
                }
            }
        }

        private String uri() {
            return "clockstore://127.0.0.1:" + server().port() + "?timeout=500ms&driftFactor=0.3" + extra;
        }

        @Override
        protected LockProvider newProvider() {
            return Locks.open(uri());
        }

        @Override
        protected Optional<String> childJvmUri() {
            return Optional.of(uri());
        }

        @Override
        protected BackendFaults faults() {
            return LocalServerFaults.of(server());
        }
    }

    /** The server's clock ends a lock; validity leaves the 30% it declares. */
    static final class ClockStoreReference extends ClockStoreKit {
        ClockStoreReference() {
            super("");
        }
    }

    /** Declares 30% drift but grants the whole lease: a server clock 24% fast ends the lock first. */
    static final class ClockStoreIgnoresDrift extends ClockStoreKit {
        ClockStoreIgnoresDrift() {
            super("&bug=IGNORES_DRIFT");
        }

        /** A 4 s lease, for the reason {@link IgnoresDrift#shortLease()} gives. */
        @Override
        protected Duration shortLease() {
            return timing.millis(4_000);
        }
    }

    /** Keeps the fence in the lock's entry: the holder after an expiry gets the same fence again. */
    static final class ClockStoreFencePerKey extends ClockStoreKit {
        ClockStoreFencePerKey() {
            super("&bug=FENCE_PER_KEY");
        }
    }

    /** Compare-and-swap on wall-clock timestamps, declaring (and allowing) a 2 s offset between clients. */
    static final class ClockStoreWallReference extends ClockStoreKit {
        ClockStoreWallReference() {
            super("&wallClockOffset=2s");
        }
    }

    /** Compares wall clocks but declares no offset: a contender ten minutes ahead takes a held lock. */
    static final class ClockStoreOffsetUndeclared extends ClockStoreKit {
        ClockStoreOffsetUndeclared() {
            super("&wallClockOffset=2s&bug=OFFSET_UNDECLARED");
        }
    }

    /** Declares a 2 s offset but judges by its own wall clock: a contender 1 s ahead takes the lock early. */
    static final class ClockStoreOffsetNotAllowed extends ClockStoreKit {
        ClockStoreOffsetNotAllowed() {
            super("&wallClockOffset=2s&bug=OFFSET_NOT_ALLOWED");
        }
    }

    static final class ExtendUnreachableExtendsLocally extends MutantKit {
        ExtendUnreachableExtendsLocally() {
            super(Mutation.EXTEND_UNREACHABLE_EXTENDS_LOCALLY);
        }
    }

    static final class ReleaseUnreachableKeepsTheLease extends MutantKit {
        ReleaseUnreachableKeepsTheLease() {
            super(Mutation.RELEASE_UNREACHABLE_KEEPS_THE_LEASE);
        }
    }

    static final class InspectAcceptsInvalidNames extends MutantKit {
        InspectAcceptsInvalidNames() {
            super(Mutation.INSPECT_ACCEPTS_INVALID_NAMES);
        }
    }

    static final class Reference extends MutantKit {
        Reference() {
            super(null);
        }
    }

    static final class ReleaseChecksTheClientNotTheLease extends MutantKit {
        ReleaseChecksTheClientNotTheLease() {
            super(Mutation.RELEASE_CHECKS_THE_CLIENT_NOT_THE_LEASE);
        }
    }

    static final class InspectRemainingInSeconds extends MutantKit {
        InspectRemainingInSeconds() {
            super(Mutation.INSPECT_REMAINING_IN_SECONDS);
        }
    }

    static final class InspectIgnoresExpiry extends MutantKit {
        InspectIgnoresExpiry() {
            super(Mutation.INSPECT_IGNORES_EXPIRY);
        }
    }

    static final class ZeroWaitSleepsAPoll extends MutantKit {
        ZeroWaitSleepsAPoll() {
            super(Mutation.ZERO_WAIT_SLEEPS_A_POLL);
        }
    }

    static final class LostLate extends MutantKit {
        LostLate() {
            super(Mutation.LOST_LATE);
        }
    }

    static final class ReleaseWithoutOwnerCheck extends MutantKit {
        ReleaseWithoutOwnerCheck() {
            super(Mutation.RELEASE_WITHOUT_OWNER_CHECK);
        }
    }

    static final class RemainingIgnoresExpiry extends MutantKit {
        RemainingIgnoresExpiry() {
            super(Mutation.REMAINING_IGNORES_EXPIRY);
        }
    }

    static final class ExtendAllFirstOnly extends MutantKit {
        ExtendAllFirstOnly() {
            super(Mutation.EXTEND_ALL_FIRST_ONLY);
        }
    }

    static final class LeaseRoundedDownToSeconds extends MutantKit {
        LeaseRoundedDownToSeconds() {
            super(Mutation.LEASE_ROUNDED_DOWN_TO_SECONDS);
        }
    }

    static final class NoExpiry extends MutantKit {
        NoExpiry() {
            super(Mutation.NO_EXPIRY);
        }
    }

    static final class RepeatingFences extends MutantKit {
        RepeatingFences() {
            super(Mutation.REPEATING_FENCES);
        }
    }

    static final class FailOpenWhenDown extends MutantKit {
        FailOpenWhenDown() {
            super(Mutation.FAIL_OPEN_WHEN_DOWN);
        }
    }

    static final class LostNeverCompletes extends MutantKit {
        LostNeverCompletes() {
            super(Mutation.LOST_NEVER_COMPLETES);
        }
    }

    static final class ExtendIgnoresOwnership extends MutantKit {
        ExtendIgnoresOwnership() {
            super(Mutation.EXTEND_IGNORES_OWNERSHIP);
        }
    }

    static final class ValidityLongerThanGranted extends MutantKit {
        ValidityLongerThanGranted() {
            super(Mutation.VALIDITY_LONGER_THAN_GRANTED);
        }
    }

    static final class NamePrefixOnly extends MutantKit {
        NamePrefixOnly() {
            super(Mutation.NAME_PREFIX_ONLY);
        }
    }

    static final class NameHashed32 extends MutantKit {
        NameHashed32() {
            super(Mutation.NAME_HASHED_32);
        }
    }

    static final class NameAccentsFolded extends MutantKit {
        NameAccentsFolded() {
            super(Mutation.NAME_ACCENTS_FOLDED);
        }
    }

    static final class NameCaseFolded extends MutantKit {
        NameCaseFolded() {
            super(Mutation.NAME_CASE_FOLDED);
        }
    }

    static final class NameNormalized extends MutantKit {
        NameNormalized() {
            super(Mutation.NAME_NORMALIZED);
        }
    }

    static final class NameTrimmed extends MutantKit {
        NameTrimmed() {
            super(Mutation.NAME_TRIMMED);
        }
    }

    static final class NameLimitInChars extends MutantKit {
        NameLimitInChars() {
            super(Mutation.NAME_LIMIT_IN_CHARS);
        }
    }

    static final class ReleaseOnAcquiringThreadOnly extends MutantKit {
        ReleaseOnAcquiringThreadOnly() {
            super(Mutation.RELEASE_ON_ACQUIRING_THREAD_ONLY);
        }
    }

    static final class WaitsTwiceTheWaitTime extends MutantKit {
        WaitsTwiceTheWaitTime() {
            super(Mutation.WAITS_TWICE_THE_WAIT_TIME);
        }
    }

    static final class ZeroWaitWaits extends MutantKit {
        ZeroWaitWaits() {
            super(Mutation.ZERO_WAIT_WAITS);
        }
    }

    static final class IgnoresInterrupts extends MutantKit {
        IgnoresInterrupts() {
            super(Mutation.IGNORES_INTERRUPTS);
        }
    }

    static final class InterruptFlagCleared extends MutantKit {
        InterruptFlagCleared() {
            super(Mutation.INTERRUPT_FLAG_CLEARED);
        }
    }

    static final class CloseLeavesLocks extends MutantKit {
        CloseLeavesLocks() {
            super(Mutation.CLOSE_LEAVES_LOCKS);
        }
    }

    static final class CloseLeavesLeasesValid extends MutantKit {
        CloseLeavesLeasesValid() {
            super(Mutation.CLOSE_LEAVES_LEASES_VALID);
        }
    }

    static final class ClosedProviderGrants extends MutantKit {
        ClosedProviderGrants() {
            super(Mutation.CLOSED_PROVIDER_GRANTS);
        }
    }

    static final class TwoStepRelease extends MutantKit {
        TwoStepRelease() {
            super(Mutation.TWO_STEP_RELEASE);
        }
    }

    static final class WatchSubscribesLate extends MutantKit {
        WatchSubscribesLate() {
            super(Mutation.WATCH_SUBSCRIBES_LATE);
        }
    }

    static final class AbandonNothing extends MutantKit {
        AbandonNothing() {
            super(Mutation.ABANDON_NOTHING);
        }
    }

    static final class RetryNotIdempotent extends MutantKit {
        RetryNotIdempotent() {
            super(Mutation.RETRY_NOT_IDEMPOTENT);
        }
    }

    static final class ValidityFromReply extends MutantKit {
        ValidityFromReply() {
            super(Mutation.VALIDITY_FROM_REPLY);
        }
    }

    static final class RenewalGivesUpAfterOneError extends MutantKit {
        RenewalGivesUpAfterOneError() {
            super(Mutation.RENEWAL_GIVES_UP_AFTER_ONE_ERROR);
        }
    }

    static final class RenewsTooLate extends MutantKit {
        RenewsTooLate() {
            super(Mutation.RENEWS_TOO_LATE);
        }
    }

    static final class PredictableTokens extends MutantKit {
        PredictableTokens() {
            super(Mutation.PREDICTABLE_TOKENS);
        }
    }

    /** The reference with a shared queue of waiters, claiming FAIR truthfully: the control for "Fairness". */
    static final class FairReference extends MutantKit {
        FairReference() {
            super(null);
        }

        @Override
        protected LockProvider newProvider() {
            return fairQueue(false);
        }
    }

    /** Claims FAIR but hands a free lock to the waiter that came last. */
    static final class ClaimsFairServesLastFirst extends MutantKit {
        ClaimsFairServesLastFirst() {
            super(null);
        }

        @Override
        protected LockProvider newProvider() {
            return fairQueue(true);
        }
    }

    static final class JavaUtilRandomTokens extends MutantKit {
        JavaUtilRandomTokens() {
            super(Mutation.JAVA_UTIL_RANDOM_TOKENS);
        }
    }

    static final class ReleaseFreesEveryLockOfTheClient extends MutantKit {
        ReleaseFreesEveryLockOfTheClient() {
            super(Mutation.RELEASE_FREES_EVERY_LOCK_OF_THE_CLIENT);
        }
    }
}
