package io.lockstep.zookeeper;

import io.lockstep.LockProvider;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * Expires a provider's ZooKeeper session on the server, as the server would after not hearing from it:
 * a second client joins the session with its id and password and closes it. The server then deletes
 * the session's ephemeral nodes and the provider's client learns of the expiry when it next talks to
 * the server.
 */
final class ZooKeeperSessions {

    private ZooKeeperSessions() {}

    /** Ends {@code provider}'s session through a server at {@code connectString}. */
    static void expire(LockProvider provider, String connectString) {
        CuratorFramework curator = ((ZooKeeperLockProvider) provider).curator();
        try {
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            long sessionId = zk.getSessionId();
            byte[] password = zk.getSessionPasswd();
            CountDownLatch connected = new CountDownLatch(1);
            ZooKeeper killer = new ZooKeeper(
                    connectString,
                    zk.getSessionTimeout(),
                    event -> {
                        if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                            connected.countDown();
                        }
                    },
                    sessionId,
                    password);
            try {
                if (!connected.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("could not join session 0x" + Long.toHexString(sessionId));
                }
            } finally {
                killer.close(); // closing the session ends it on the server
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (Exception e) {
            throw new IllegalStateException("could not expire the session of " + provider, e);
        }
    }
}
