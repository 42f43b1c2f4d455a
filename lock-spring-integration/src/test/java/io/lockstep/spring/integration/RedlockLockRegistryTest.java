package io.lockstep.spring.integration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("LockstepLockRegistry behaves as Spring's registries do, on Redlock (one node)")
class RedlockLockRegistryTest extends LockRegistryContract {

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
