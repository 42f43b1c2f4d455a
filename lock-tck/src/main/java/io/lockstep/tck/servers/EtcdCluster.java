package io.lockstep.tck.servers;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.stream.Collectors;

/**
 * A cluster of {@code etcd} members on loopback, each with ephemeral client and peer ports, started
 * together (a member serves only once a quorum has formed). Each member is an {@link EtcdServer}, so a
 * test can SIGSTOP, SIGKILL and restart any of them; {@link #leader()} says which one leads.
 *
 * <pre>{@code
 * try (EtcdCluster cluster = EtcdCluster.start(3)) {
 *     LockProvider locks = Locks.open(cluster.uri());
 *     cluster.leader().kill();
 * }
 * }</pre>
 */
public final class EtcdCluster implements AutoCloseable {

    private final List<EtcdServer> members;

    private EtcdCluster(List<EtcdServer> members) {
        this.members = List.copyOf(members);
    }

    /** Starts {@code size} members (1 to 7) and returns once every one of them answers with a leader. */
    public static EtcdCluster start(int size) {
        if (size < 1 || size > 7) {
            throw new IllegalArgumentException("size must be between 1 and 7, was " + size);
        }
        List<EtcdServer> members = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            members.add(new EtcdServer("m" + i, LocalServer.freePort(), List.of()));
        }
        String initial =
                members.stream().map(m -> m.memberName() + "=" + m.peerUrl()).collect(Collectors.joining(","));
        members.forEach(m -> m.initialCluster(initial));
        EtcdCluster cluster = new EtcdCluster(members);
        try {
            CompletableFuture.allOf(members.stream()
                            .map(m -> CompletableFuture.runAsync(m::startProcess))
                            .toArray(CompletableFuture[]::new))
                    .join();
        } catch (CompletionException e) {
            cluster.close();
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
        return cluster;
    }

    /** The members, in start order. */
    public List<EtcdServer> members() {
        return members;
    }

    /** {@code etcd://127.0.0.1:<port>,127.0.0.1:<port>,...} over every member's client port. */
    public String uri() {
        return "etcd://" + members.stream().map(m -> m.host() + ":" + m.port()).collect(Collectors.joining(","));
    }

    /** The client endpoints ({@code http://127.0.0.1:<port>}) of every member. */
    public List<String> endpoints() {
        return members.stream().map(EtcdServer::endpoint).toList();
    }

    /** The member the running members agree leads, if they answer and agree. */
    public Optional<EtcdServer> leader() {
        String leaderId = null;
        EtcdServer leader = null;
        for (EtcdServer m : members) {
            if (!m.isRunning()) {
                continue;
            }
            Optional<String[]> status = m.memberAndLeader();
            if (status.isEmpty()) {
                continue;
            }
            String[] ids = status.get();
            if (leaderId != null && !leaderId.equals(ids[1])) {
                return Optional.empty();
            }
            leaderId = ids[1];
            if (ids[0].equals(ids[1])) {
                leader = m;
            }
        }
        return Optional.ofNullable(leader);
    }

    /** Stops every member. */
    @Override
    public void close() {
        for (EtcdServer m : members) {
            m.close();
        }
    }

    @Override
    public String toString() {
        return "EtcdCluster"
                + members.stream().map(m -> m.memberName() + "@" + m.port()).toList();
    }
}
