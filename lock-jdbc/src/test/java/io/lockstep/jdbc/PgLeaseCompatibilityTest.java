package io.lockstep.jdbc;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The kit in lease mode on PostgreSQL, faults included (see {@link ServerCompatibilityKit}). It runs the
 * clock group for lease mode on PostgreSQL ({@link PgSchemaGuideCompatibilityTest} defers to it): the fast
 * server clock restarts PostgreSQL, whose {@code now()} counts {@code expires_at}.
 */
@DisplayName("jdbc lease mode passes the compatibility kit on PostgreSQL, faults included")
@ResourceLock(SharedServers.POSTGRES)
class PgLeaseCompatibilityTest extends ServerCompatibilityKit {

    PgLeaseCompatibilityTest() {
        super(Database.POSTGRES, "lease", "", "");
    }
}
