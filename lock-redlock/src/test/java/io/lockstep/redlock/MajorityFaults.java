package io.lockstep.redlock;

import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.TcpProxy;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The kit's server faults for Redlock: "the server" is a majority of the nodes. Pausing, killing or
 * partitioning it leaves too few nodes for a quorum, which is what makes a Redlock backend unreachable.
 */
final class MajorityFaults implements BackendFaults {

    private final RedisNodes nodes;
    private final List<Integer> majority;
    private final List<TcpProxy> proxies;

    /** Faults on nodes {@code majority}, reached by the clients through {@code proxies}. */
    MajorityFaults(RedisNodes nodes, List<Integer> majority, List<TcpProxy> proxies) {
        this.nodes = nodes;
        this.majority = List.copyOf(majority);
        this.proxies = List.copyOf(proxies);
    }

    @Override
    public Set<Fault> supported() {
        // No LATENCY: the node timeout is a tenth of the lease (at most 250 ms), so a latency the kit adds
        // to expose slow-reply bugs takes the quorum away instead (RedlockOptions.nodeTimeoutFor).
        return EnumSet.of(Fault.PAUSE_SERVER, Fault.KILL_SERVER, Fault.PARTITION, Fault.LOST_REPLIES);
    }

    @Override
    public void pauseServer() {
        majority.forEach(nodes::pause);
    }

    @Override
    public void resumeServer() {
        majority.forEach(nodes::resume);
    }

    @Override
    public void killServer() {
        majority.forEach(nodes::kill);
    }

    @Override
    public void restartServer() {
        majority.forEach(nodes::restart);
    }

    @Override
    public void partition() {
        proxies.forEach(TcpProxy::stall);
    }

    @Override
    public void heal() {
        proxies.forEach(TcpProxy::heal);
    }

    /** The majority applies requests and its replies on the open connections are lost. */
    @Override
    public void loseReplies() {
        proxies.forEach(TcpProxy::loseReplies);
    }

    @Override
    public void restoreReplies() {
        proxies.forEach(TcpProxy::resetConnectionsLosingReplies);
    }

    @Override
    public String toString() {
        return "MajorityFaults[nodes " + majority + " of " + nodes.size() + "]";
    }
}
