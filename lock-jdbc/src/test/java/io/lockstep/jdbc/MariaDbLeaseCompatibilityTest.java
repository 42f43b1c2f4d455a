package io.lockstep.jdbc;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The kit in lease mode on MariaDB, faults included (see {@link ServerCompatibilityKit}). It runs the clock
 * group too: the fast server clock restarts MariaDB, another server whose clock counts {@code expires_at}
 * than {@link PgLeaseCompatibilityTest}'s.
 */
@DisplayName("jdbc lease mode passes the compatibility kit on MariaDB, faults included")
@ResourceLock(SharedServers.MARIADB)
class MariaDbLeaseCompatibilityTest extends ServerCompatibilityKit {

    MariaDbLeaseCompatibilityTest() {
        super(Database.MARIADB, "lease", "&sessionTimeout=2s", "&sessionTimeout=2s");
    }
}
