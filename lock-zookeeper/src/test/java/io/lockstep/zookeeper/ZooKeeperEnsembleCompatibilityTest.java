package io.lockstep.zookeeper;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.servers.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("lock-zookeeper passes the compatibility kit on a 3-node ZooKeeper ensemble, faults included")
class ZooKeeperEnsembleCompatibilityTest extends LockProviderCompatibilityKit {

    private static ZooKeeperEnsemble ensemble;
    private static EnsembleFaults faults;

    @BeforeAll
    static void startEnsemble() {
        ensemble = ZooKeeperEnsemble.start(3);
        faults = EnsembleFaults.proxied(ensemble);
    }

    @AfterAll
    static void stopEnsemble() {
        if (faults != null) {
            faults.close();
        }
        if (ensemble != null) {
            ensemble.close();
        }
    }

    @Override
    protected LockProvider newProvider() {
        return Locks.open("zookeeper://" + faults.proxiedConnectString() + ZooKeeperTesting.settings(timing));
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(ZooKeeperTesting.unreachable());
    }

    @Override
    protected BackendFaults faults() {
        return faults;
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of(ensemble.uri() + ZooKeeperTesting.settings(timing));
    }

    /**
     * A round trip after a fault includes the ZooKeeper client's reconnect: after a connection is given
     * up (a lost reply, a reset) it waits a random 0 to 1 s before it connects again (ClientCnxn, not
     * configurable) and then revalidates its session, so nothing, a cleanup or another client's check,
     * reaches the server sooner: 1.8 s on the shared 2-core machine in {@code
     * ZooKeeperLockProviderTest.lostReplyOfAUriProviderLeavesTheLockFree}.
     */
    @Override
    protected Duration margin() {
        return timing.millis(3_000);
    }

    @Override
    protected Duration longLease() {
        return ZooKeeperTesting.sessionTimeout(timing);
    }

    /**
     * The clock group runs in {@link ZooKeeperCompatibilityTest}: the ensemble's faults offer no fast server
     * clock (every member would have to restart on it), so here the group would only repeat the slow holder
     * and the offset contender, the same client code against the same session rules; the one server's run
     * adds the server restarted on a fast clock.
     */
    @Override
    protected Optional<Class<? extends LockProviderCompatibilityKit>> clockGroupRunsIn() {
        return Optional.of(ZooKeeperCompatibilityTest.class);
    }
}
