package io.lockstep.tck.reference;

import io.lockstep.LockProvider;
import io.lockstep.MonotonicClock;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;

/** The reference provider passes the whole kit, fault scenarios included: this is the kit's own test. */
@DisplayName("the in-memory reference provider passes the compatibility kit")
class InMemoryCompatibilityTest extends LockProviderCompatibilityKit {

    // A fresh store per test: JUnit creates a new instance of this class for every test.
    private final InMemoryLockStore store = new InMemoryLockStore();

    @Override
    protected LockProvider newProvider() {
        return InMemoryLockProvider.inspecting(store); // so the Inspect group runs; mem:// cannot tell
    }

    @Override
    protected BackendFaults faults() {
        return store.faults();
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        InMemoryLockStore down = new InMemoryLockStore("mem://unreachable:1", MonotonicClock.SYSTEM);
        down.faults().killServer();
        return Optional.of(new InMemoryLockProvider(down));
    }
}
