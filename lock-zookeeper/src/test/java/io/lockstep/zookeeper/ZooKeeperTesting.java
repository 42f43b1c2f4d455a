package io.lockstep.zookeeper;

import io.lockstep.LockProvider;
import io.lockstep.tck.Timing;
import io.lockstep.tck.servers.LocalServer;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/** Settings the module's tests share. */
final class ZooKeeperTesting {

    private ZooKeeperTesting() {}

    /**
     * The session timeout of the tests' clients: long enough for a loaded machine, short enough that a
     * partition is noticed (after two thirds of it) within the kit's waits. Also the kit's long lease,
     * since a lease may not outlive its session.
     */
    static Duration sessionTimeout(Timing timing) {
        return timing.millis(8_000);
    }

    /** The query string for the tests' URIs. */
    static String settings(Timing timing) {
        return "?sessionTimeout=" + sessionTimeout(timing).toMillis() + "ms&connectionTimeout="
                + timing.millis(2_000).toMillis() + "ms";
    }

    /** A provider wired to a started Curator client pointed at a port nothing listens on. */
    static LockProvider unreachable() {
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString("127.0.0.1:" + LocalServer.freePort())
                .sessionTimeoutMs(4_000)
                .connectionTimeoutMs(500)
                .retryPolicy(new RetryNTimes(0, 0))
                .build();
        curator.start();
        return ZooKeeperLockProvider.builder(curator)
                .closeClient(true)
                .describedAs("127.0.0.1 (nothing listening)")
                .build();
    }
}
