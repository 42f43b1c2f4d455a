package io.lockstep.tck.reference;

import io.lockstep.LockProvider;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.reference.BrokenProviders.Mutation;
import org.jspecify.annotations.Nullable;

/**
 * The kit against the reference provider with one bug each. None is a test on its own: nested classes
 * are not run by the build, {@link KitMutationTest} launches them and expects them to fail.
 */
final class MutantKits {

    private MutantKits() {}

    /** The kit against the reference provider with {@link #mutation()} applied (none: the control). */
    abstract static class MutantKit extends LockProviderCompatibilityKit {

        private final InMemoryLockStore store = new InMemoryLockStore();

        abstract @Nullable Mutation mutation();

        @Override
        protected LockProvider newProvider() {
            Mutation mutation = mutation();
            return mutation == null ? new InMemoryLockProvider(store) : BrokenProviders.open(mutation, store);
        }

        @Override
        protected BackendFaults faults() {
            return store.faults();
        }
    }

    static final class Reference extends MutantKit {
        @Override
        @Nullable
        Mutation mutation() {
            return null;
        }
    }

    static final class ReleaseWithoutOwnerCheck extends MutantKit {
        @Override
        @Nullable
        Mutation mutation() {
            return Mutation.RELEASE_WITHOUT_OWNER_CHECK;
        }
    }

    static final class NoExpiry extends MutantKit {
        @Override
        @Nullable
        Mutation mutation() {
            return Mutation.NO_EXPIRY;
        }
    }

    static final class RepeatingFences extends MutantKit {
        @Override
        @Nullable
        Mutation mutation() {
            return Mutation.REPEATING_FENCES;
        }
    }

    static final class FailOpenWhenDown extends MutantKit {
        @Override
        @Nullable
        Mutation mutation() {
            return Mutation.FAIL_OPEN_WHEN_DOWN;
        }
    }

    static final class LostNeverCompletes extends MutantKit {
        @Override
        @Nullable
        Mutation mutation() {
            return Mutation.LOST_NEVER_COMPLETES;
        }
    }

    static final class ExtendIgnoresOwnership extends MutantKit {
        @Override
        @Nullable
        Mutation mutation() {
            return Mutation.EXTEND_IGNORES_OWNERSHIP;
        }
    }

    static final class ValidityLongerThanGranted extends MutantKit {
        @Override
        @Nullable
        Mutation mutation() {
            return Mutation.VALIDITY_LONGER_THAN_GRANTED;
        }
    }

    static final class ReleaseFreesEveryLockOfTheClient extends MutantKit {
        @Override
        @Nullable
        Mutation mutation() {
            return Mutation.RELEASE_FREES_EVERY_LOCK_OF_THE_CLIENT;
        }
    }
}
