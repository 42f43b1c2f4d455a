package io.lockstep.zookeeper;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.LocalServerFaults;
import io.lockstep.tck.faults.TcpProxy;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("lock-zookeeper passes the compatibility kit on one real ZooKeeper server, faults included")
class ZooKeeperCompatibilityTest extends LockProviderCompatibilityKit {

    private static io.lockstep.tck.servers.ZooKeeperServer zk;
    private static TcpProxy proxy;

    @BeforeAll
    static void startZooKeeper() {
        zk = io.lockstep.tck.servers.ZooKeeperServer.start();
        proxy = TcpProxy.start(zk.host(), zk.port());
    }

    @AfterAll
    static void stopZooKeeper() {
        if (proxy != null) {
            proxy.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    @Override
    protected LockProvider newProvider() {
        // Through the proxy, so the kit can partition clients from the server.
        return Locks.open("zookeeper://" + proxy.host() + ":" + proxy.port() + ZooKeeperTesting.settings(timing));
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(ZooKeeperTesting.unreachable());
    }

    @Override
    protected BackendFaults faults() {
        // The kit's faults for a local server, plus session expiry: a second client joins the holder's
        // session with its id and password and closes it.
        return new LocalServerFaults(zk, proxy) {
            @Override
            public Set<Fault> supported() {
                Set<Fault> all = EnumSet.copyOf(super.supported());
                all.add(Fault.EXPIRE_SESSION);
                return all;
            }

            @Override
            public void expireSession(LockProvider provider) {
                ZooKeeperSessions.expire(provider, zk.connectString());
            }
        };
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of(zk.uri() + ZooKeeperTesting.settings(timing));
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
}
