package io.lockstep.shedlock;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/**
 * ZooKeeper refuses a lease longer than the client's session (20 s here), and ShedLock's suite locks for 5
 * minutes: this is what keep-alive mode is for, so ZooKeeper runs the suite in it. The lease, 10 s, is at
 * least the longest lockAtLeastFor the suite asks for (9 s), or keep-alive mode would refuse it.
 */
@DisplayName("ShedLock's provider suite and Lockstep's checks on ZooKeeper (keep-alive mode, 10 s leases)")
class ZooKeeperShedLockTest extends ShedLockProviderContract {

    private static Backend backend;

    @BeforeAll
    static void startServer() {
        backend = Backend.zookeeper();
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

    @Override
    protected LockstepShedLockOptions options() {
        return LockstepShedLockOptions.keepAlive(Duration.ofSeconds(10));
    }
}
