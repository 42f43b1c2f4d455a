package io.lockstep.tck.faults;

import io.lockstep.tck.servers.LocalServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link BackendFaults} for a cluster of {@link LocalServer}s (an etcd cluster, a ZooKeeper ensemble)
 * whose clients connect through one {@link TcpProxy} per member. "The server" of the kit's scenarios is
 * the whole cluster, so the backend is really unreachable as they expect (one member down would not
 * make acquiring fail closed): every member is paused, killed and restarted together, and a partition,
 * latency or lost replies apply to every proxy.
 *
 * <p>Sessions are backend-specific: a subclass adds {@link Fault#EXPIRE_SESSION} to {@link
 * #supported()} and overrides {@link #expireSession(io.lockstep.LockProvider, io.lockstep.Lease)}. A
 * backend that needs more than its members answering after a restart (a leader elected) overrides
 * {@link #awaitRestarted()}.
 *
 * <p>Not thread-safe: one test drives it. {@link #close()} closes the proxies, not the servers.
 */
public class LocalClusterFaults implements BackendFaults, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LocalClusterFaults.class);

    private final List<? extends LocalServer> members;
    private final List<TcpProxy> proxies;

    /** Faults for {@code members}, with one proxy started per member. */
    protected LocalClusterFaults(List<? extends LocalServer> members) {
        this.members = List.copyOf(members);
        if (this.members.isEmpty()) {
            throw new IllegalArgumentException("members is empty: a cluster needs at least one server");
        }
        List<TcpProxy> started = new ArrayList<>();
        for (LocalServer member : this.members) {
            started.add(TcpProxy.start(member.host(), member.port()));
        }
        this.proxies = List.copyOf(started);
    }

    /** Faults for {@code members}, whose clients connect through one proxy per member. */
    public static LocalClusterFaults proxied(List<? extends LocalServer> members) {
        Objects.requireNonNull(members, "members");
        return new LocalClusterFaults(members);
    }

    /** The proxies, in the order of the members. */
    public final List<TcpProxy> proxies() {
        return proxies;
    }

    /** {@code host:port} of every proxy, joined by commas: the clients' connect string or endpoints. */
    public final String proxiedAddresses() {
        return proxies.stream().map(p -> p.host() + ":" + p.port()).collect(Collectors.joining(","));
    }

    /** Pause, kill, partition, latency and lost replies; a subclass adds what it can do beyond these. */
    @Override
    public Set<Fault> supported() {
        return EnumSet.of(Fault.PAUSE_SERVER, Fault.KILL_SERVER, Fault.PARTITION, Fault.LATENCY, Fault.LOST_REPLIES);
    }

    @Override
    public void pauseServer() {
        log.info("Pausing every member of {} (SIGSTOP)", this);
        members.forEach(LocalServer::pause);
    }

    @Override
    public void resumeServer() {
        log.info("Resuming every member of {} (SIGCONT)", this);
        members.forEach(LocalServer::resume);
    }

    @Override
    public void killServer() {
        log.info("Killing every member of {} (SIGKILL)", this);
        members.forEach(LocalServer::kill);
    }

    /** Restarts every member at once (a member may answer only once a quorum is back), then {@link #awaitRestarted()}. */
    @Override
    public void restartServer() {
        log.info("Restarting every member of {}", this);
        CompletableFuture.allOf(members.stream()
                        .map(m -> CompletableFuture.runAsync(m::restart))
                        .toArray(CompletableFuture[]::new))
                .join();
        awaitRestarted();
    }

    /** Called after every member restarted and answers; waits for whatever else the backend needs. */
    protected void awaitRestarted() {}

    @Override
    public void partition() {
        log.info("Partitioning the clients from every member of {}", this);
        proxies.forEach(TcpProxy::stall);
    }

    @Override
    public void heal() {
        log.info("Healing the partition to {}", this);
        proxies.forEach(TcpProxy::heal);
    }

    @Override
    public void addLatency(Duration oneWay) {
        log.info("Delaying every message to and from {} by {}", this, oneWay);
        for (TcpProxy proxy : proxies) {
            proxy.delay(TcpProxy.Direction.CLIENT_TO_SERVER, oneWay);
            proxy.delay(TcpProxy.Direction.SERVER_TO_CLIENT, oneWay);
        }
    }

    @Override
    public void removeLatency() {
        addLatency(Duration.ZERO);
    }

    @Override
    public void loseReplies() {
        log.info("Losing the replies of every connection open to {}", this);
        proxies.forEach(TcpProxy::loseReplies);
    }

    @Override
    public void restoreReplies() {
        log.info("Resetting the connections to {} that lost their replies", this);
        proxies.forEach(TcpProxy::resetConnectionsLosingReplies);
    }

    /** Closes the proxies; the servers are the caller's. */
    @Override
    public void close() {
        proxies.forEach(TcpProxy::close);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "["
                + members.stream().map(m -> String.valueOf(m.port())).collect(Collectors.joining(",", "ports ", ""))
                + "]";
    }
}
