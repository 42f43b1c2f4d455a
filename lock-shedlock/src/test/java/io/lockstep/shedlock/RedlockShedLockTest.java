package io.lockstep.shedlock;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("ShedLock's provider suite and Lockstep's checks on Redlock, one node (lease = lockAtMostFor)")
class RedlockShedLockTest extends ShedLockProviderContract {

    private static Backend backend;

    @BeforeAll
    static void startServer() {
        backend = Backend.redlock();
    }

    @AfterAll
    static void stopServer() {
        if (backend != null) {
            backend.close();
        }
    }

    @Override
    protected Backend backend() {
        return backend;
    }
}
