package io.lockstep.spring.integration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("LockstepLockRegistry behaves as Spring's registries do, on MariaDB")
class MariaDbLockRegistryTest extends LockRegistryContract {

    private static Backend backend;

    @BeforeAll
    static void startServer() {
        backend = Backend.mariadb();
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
