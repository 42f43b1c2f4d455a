package io.lockstep.jdbc;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The kit in session mode on MariaDB, faults included (see {@link ServerCompatibilityKit}). Its clock group
 * is its own (a session, not a timestamp, ends the lock), and skips itself: session mode claims no {@code
 * LEASE_EXPIRY}.
 */
@DisplayName("jdbc session mode passes the compatibility kit on MariaDB, faults included")
@ResourceLock(SharedServers.MARIADB)
class MariaDbSessionCompatibilityTest extends ServerCompatibilityKit {

    MariaDbSessionCompatibilityTest() {
        super(Database.MARIADB, "session", "&sessionTimeout=2s", "&sessionTimeout=2s");
    }
}
