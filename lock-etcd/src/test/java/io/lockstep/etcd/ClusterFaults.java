package io.lockstep.etcd;

import io.etcd.jetcd.Client;
import io.lockstep.LockProvider;
import io.lockstep.tck.faults.LocalClusterFaults;
import io.lockstep.tck.servers.EtcdCluster;
import java.util.EnumSet;
import java.util.Set;

/**
 * The kit's faults on a whole etcd cluster (see {@link LocalClusterFaults}), plus sessions expired by
 * revoking them through an administrative client.
 */
final class ClusterFaults extends LocalClusterFaults {

    private final EtcdCluster cluster;
    private final Client admin;

    ClusterFaults(EtcdCluster cluster, Client admin) {
        super(cluster.members());
        this.cluster = cluster;
        this.admin = admin;
    }

    @Override
    public Set<Fault> supported() {
        Set<Fault> all = EnumSet.copyOf(super.supported());
        all.add(Fault.EXPIRE_SESSION);
        return all;
    }

    @Override
    public void expireSession(LockProvider provider) {
        EtcdFaults.revokeSessions(provider, admin);
    }

    @Override
    public String toString() {
        return "ClusterFaults[" + cluster + "]";
    }
}
