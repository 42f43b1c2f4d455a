package io.lockstep.jdbc;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.parallel.ResourceLock;

/** The kit in lease mode on PostgreSQL, faults included (see {@link ServerCompatibilityKit}). */
@DisplayName("jdbc lease mode passes the compatibility kit on PostgreSQL, faults included")
@ResourceLock(SharedServers.POSTGRES)
class PgLeaseCompatibilityTest extends ServerCompatibilityKit {

    PgLeaseCompatibilityTest() {
        super(Database.POSTGRES, "lease", "", "");
    }
}
