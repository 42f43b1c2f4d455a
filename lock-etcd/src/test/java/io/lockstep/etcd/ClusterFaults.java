package io.lockstep.etcd;

import io.etcd.jetcd.Client;
import io.lockstep.LockProvider;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.EtcdCluster;
import io.lockstep.tck.servers.EtcdServer;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The kit's faults on a whole etcd cluster, so "the backend" is unreachable as the kit's scenarios
 * expect: every member paused, killed and restarted together, every client cut from every member by
 * its proxy; sessions expired by revoking them through an administrative client.
 */
final class ClusterFaults implements BackendFaults {

    private final EtcdCluster cluster;
    private final List<TcpProxy> proxies;
    private final BackendFaults sessions;

    ClusterFaults(EtcdCluster cluster, List<TcpProxy> proxies, Client admin) {
        this.cluster = cluster;
        this.proxies = proxies;
        this.sessions = new EtcdFaults(BackendFaults.NONE, admin);
    }

    @Override
    public Set<Fault> supported() {
        return EnumSet.allOf(Fault.class);
    }

    @Override
    public void pauseServer() {
        cluster.members().forEach(EtcdServer::pause);
    }

    @Override
    public void resumeServer() {
        cluster.members().forEach(EtcdServer::resume);
    }

    @Override
    public void killServer() {
        cluster.members().forEach(EtcdServer::kill);
    }

    @Override
    public void restartServer() {
        // Together: a member answers only once a quorum is back.
        CompletableFuture.allOf(cluster.members().stream()
                        .map(m -> CompletableFuture.runAsync(m::restart))
                        .toArray(CompletableFuture[]::new))
                .join();
    }

    @Override
    public void partition() {
        proxies.forEach(TcpProxy::stall);
    }

    @Override
    public void heal() {
        proxies.forEach(TcpProxy::heal);
    }

    @Override
    public void expireSession(LockProvider provider) {
        sessions.expireSession(provider);
    }

    @Override
    public String toString() {
        return "ClusterFaults[" + cluster + "]";
    }
}
