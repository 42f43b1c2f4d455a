package io.lockstep.tck.servers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A ZooKeeper ensemble of real servers, each a {@link ZooKeeperServer} in its own child JVM on
 * loopback with ephemeral client, quorum and election ports. Members can be paused, killed and
 * restarted one at a time ({@link #member(int)}, {@link #leader()}), so tests can take the leader down
 * or freeze the server a client is connected to.
 *
 * <pre>{@code
 * try (ZooKeeperEnsemble zk = ZooKeeperEnsemble.start(3)) {
 *     LockProvider locks = Locks.open(zk.uri());
 * }
 * }</pre>
 *
 * <p>Not thread-safe; one test drives it.
 */
public final class ZooKeeperEnsemble implements AutoCloseable {

    private final List<ZooKeeperServer> members;

    private ZooKeeperEnsemble(List<ZooKeeperServer> members) {
        this.members = List.copyOf(members);
    }

    /** Starts {@code size} servers (3 or 5 make sense) granting sessions of up to 60 s, and waits for a leader. */
    public static ZooKeeperEnsemble start(int size) {
        if (size < 2 || size > 9) {
            throw new IllegalArgumentException("size must be between 2 and 9, was " + size);
        }
        List<String> peers = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            // Quorum and election ports; only the leader binds its quorum port, so it must be one nothing
            // else is handed meanwhile (LocalServer.freePort).
            peers.add("127.0.0.1:" + LocalServer.freePort() + ":" + LocalServer.freePort());
        }
        List<ZooKeeperServer> members = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) {
                ZooKeeperServer member = new ZooKeeperServer(Duration.ofSeconds(60), i + 1, peers);
                members.add(member);
                member.startProcess();
            }
            ZooKeeperEnsemble started = new ZooKeeperEnsemble(members);
            started.awaitLeader(Duration.ofSeconds(60));
            return started;
        } catch (RuntimeException e) {
            members.forEach(ZooKeeperServer::close);
            throw e;
        }
    }

    /** The members, in server-id order (server id = index + 1). */
    public List<ZooKeeperServer> members() {
        return members;
    }

    /** The member with index {@code index} (server id {@code index + 1}). */
    public ZooKeeperServer member(int index) {
        return members.get(index);
    }

    /** The member that is leader now, if one is. */
    public Optional<ZooKeeperServer> leader() {
        for (ZooKeeperServer member : members) {
            if (member.isRunning() && member.mode().filter("leader"::equals).isPresent()) {
                return Optional.of(member);
            }
        }
        return Optional.empty();
    }

    /**
     * Waits until one running member is leader and every other running member follows (a quorum
     * serves); returns the leader.
     *
     * @throws IllegalStateException if that does not happen within {@code timeout}
     */
    public ZooKeeperServer awaitLeader(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Optional<ZooKeeperServer> leader = leader();
            boolean othersFollow = members.stream()
                    .filter(ZooKeeperServer::isRunning)
                    .allMatch(m -> m.mode().isPresent());
            if (leader.isPresent() && othersFollow) {
                return leader.get();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no ZooKeeper leader within " + timeout + ": " + modes());
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for a leader", e);
            }
        }
    }

    /** {@code 127.0.0.1:p1,127.0.0.1:p2,...}, as a ZooKeeper client takes it. */
    public String connectString() {
        return members.stream().map(ZooKeeperServer::connectString).collect(Collectors.joining(","));
    }

    /** {@code zookeeper://127.0.0.1:p1,127.0.0.1:p2,...}. */
    public String uri() {
        return "zookeeper://" + connectString();
    }

    /** Each member's port and mode, for messages. */
    public String modes() {
        return members.stream()
                .map(m -> m.port() + "=" + (m.isRunning() ? m.mode().orElse("not serving") : "down"))
                .collect(Collectors.joining(", ", "[", "]"));
    }

    /** Stops every member. Idempotent. */
    @Override
    public void close() {
        for (ZooKeeperServer member : members) {
            member.close();
        }
    }
}
