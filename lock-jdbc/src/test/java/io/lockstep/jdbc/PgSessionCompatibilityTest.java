package io.lockstep.jdbc;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The kit in session mode on PostgreSQL, faults included (see {@link ServerCompatibilityKit}). Its clock
 * group is its own (a session, not a timestamp, ends the lock), and skips itself: session mode claims no
 * {@code LEASE_EXPIRY}.
 */
@DisplayName("jdbc session mode passes the compatibility kit on PostgreSQL, faults included")
@ResourceLock(SharedServers.POSTGRES)
class PgSessionCompatibilityTest extends ServerCompatibilityKit {

    PgSessionCompatibilityTest() {
        super(Database.POSTGRES, "session", "&sessionTimeout=1500ms", "");
    }
}
