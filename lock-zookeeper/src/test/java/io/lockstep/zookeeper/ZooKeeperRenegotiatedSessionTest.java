package io.lockstep.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import io.lockstep.tck.servers.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * ZooKeeper negotiates the session timeout on every connect, also when a session resumes on a server
 * (here: the same one restarted) whose {@code maxSessionTimeout} is lower than at open. A lease sized to
 * the old timeout must not outlive the session: the holder's lease ends when the lower timeout is
 * learnt, so a client partitioned afterwards is never a second holder beside the next one. The review's
 * reproduction ({@code ZkRenegotiatedSession}, finding F1) as a recorded, checked history.
 */
@DisplayName("lock-zookeeper: a session renegotiated to a shorter timeout on reconnect never leaves two holders")
class ZooKeeperRenegotiatedSessionTest {

    private static final Duration OPENED_WITH = Duration.ofSeconds(15);
    private static final Duration RENEGOTIATED = Duration.ofSeconds(3);
    private static final Duration LONG_LEASE = Duration.ofSeconds(14);

    private final List<AutoCloseable> toClose = Collections.synchronizedList(new ArrayList<>());

    @AfterEach
    void cleanUp() {
        List<AutoCloseable> all = new ArrayList<>(toClose);
        Collections.reverse(all);
        for (AutoCloseable c : all) {
            try {
                c.close();
            } catch (Exception ignored) {
                // teardown
            }
        }
    }

    private <T extends AutoCloseable> T track(T closeable) {
        toClose.add(closeable);
        return closeable;
    }

    @Test
    @DisplayName(
            "a provider opened from a URI: the long lease ends at the reconnect, before a second client is granted")
    void providerFromUri() throws Exception {
        ZooKeeperServer server = track(ZooKeeperServer.start(Duration.ofSeconds(20)));
        TcpProxy proxy = track(TcpProxy.start(server.host(), server.port()));
        LockProvider holder = track(
                Locks.open("zookeeper://" + proxy.host() + ":" + proxy.port() + "?sessionTimeout=" + OPENED_WITH));
        checkNoOverlap(server, proxy, (ZooKeeperLockProvider) holder);
    }

    /**
     * A caller's client whose own connection-state listener is slow (here: 8 s on each suspension) holds up
     * every listener behind it and Curator's "session timeout elapsed while SUSPENDED" injection, which
     * run on the same thread. Neither may be what ends the lease: on the old code the overlap then lasted
     * up to the lease's remaining time.
     */
    @Test
    @DisplayName("a caller's Curator client with a slow connection-state listener: still no overlap")
    void callerSuppliedClientWithSlowListener() throws Exception {
        ZooKeeperServer server = track(ZooKeeperServer.start(Duration.ofSeconds(20)));
        TcpProxy proxy = track(TcpProxy.start(server.host(), server.port()));
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(proxy.host() + ":" + proxy.port())
                .sessionTimeoutMs((int) OPENED_WITH.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryNTimes(0, 0))
                .build();
        curator.getConnectionStateListenable().addListener((client, state) -> {
            if (state == ConnectionState.SUSPENDED) {
                try {
                    Thread.sleep(8_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        curator.start();
        ZooKeeperLockProvider holder = track(ZooKeeperLockProvider.builder(curator)
                .closeClient(true)
                .describedAs("caller's client")
                .build());
        assertThat(curator.blockUntilConnected(30, TimeUnit.SECONDS)).isTrue();
        checkNoOverlap(server, proxy, holder);
    }

    private void checkNoOverlap(ZooKeeperServer server, TcpProxy proxy, ZooKeeperLockProvider holder) throws Exception {
        History history = new History();
        History.Recorder first = history.client("first");
        History.Recorder second = history.client("second");
        String name = "renegotiated";
        first.invoke(Op.ACQUIRE, name);
        Lease lease = holder.tryAcquire(name, LeaseOptions.of(LONG_LEASE)).orElseThrow();
        first.acquired(lease);
        lease.lost().thenAccept(r -> first.lost(lease));

        server.restart(RENEGOTIATED); // a rolling configuration change lowering maxSessionTimeout
        ZooKeeperTesting.await("the holder resumes its session on the restarted server", Duration.ofSeconds(30), () -> {
            try {
                return holder.curator().getZookeeperClient().isConnected()
                        && holder.curator().getZookeeperClient().getZooKeeper().getSessionTimeout()
                                == RENEGOTIATED.toMillis();
            } catch (Exception e) {
                return false;
            }
        });
        proxy.stall(); // the holder is partitioned: the server expires its session RENEGOTIATED later

        try (LockProvider other = Locks.open(server.uri() + "?sessionTimeout=" + RENEGOTIATED)) {
            second.invoke(Op.ACQUIRE, name);
            Optional<Lease> taken = Optional.empty();
            long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (taken.isEmpty() && System.nanoTime() - until < 0) {
                taken = other.tryAcquire(name, LeaseOptions.of(Duration.ofSeconds(2)));
                if (taken.isEmpty()) {
                    Thread.sleep(20);
                }
            }
            assertThat(taken)
                    .as("the second client is granted the lock once the session ended")
                    .isPresent();
            second.acquired(taken.get());
            boolean firstStillValid = lease.isValid();
            boolean firstLost = lease.lost().toCompletableFuture().isDone();
            HistoryChecker.strict().check(history).assertValid();
            assertThat(firstStillValid)
                    .as("first lease valid when the second was granted")
                    .isFalse();
            assertThat(firstLost)
                    .as("first lease's lost() completed when the second was granted")
                    .isTrue();
            assertThat(taken.get().fencingToken().getAsLong())
                    .isGreaterThan(lease.fencingToken().getAsLong());
            taken.get().release();
        }
        proxy.heal();
        assertThatThrownBy(() -> holder.tryAcquire("too-long", LeaseOptions.of(LONG_LEASE)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("session timeout");
    }
}
