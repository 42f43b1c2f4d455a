package io.lockstep.zookeeper;

import io.lockstep.LockProvider;
import io.lockstep.tck.faults.LocalClusterFaults;
import io.lockstep.tck.servers.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

/**
 * The kit's faults on a whole {@link ZooKeeperEnsemble} (see {@link LocalClusterFaults}), plus session
 * expiry through any member. Faults of single members are in {@code ZooKeeperEnsembleFaultsTest}.
 */
final class EnsembleFaults extends LocalClusterFaults {

    private final ZooKeeperEnsemble ensemble;

    private EnsembleFaults(ZooKeeperEnsemble ensemble) {
        super(ensemble.members());
        this.ensemble = ensemble;
    }

    /** Starts one proxy per member. */
    static EnsembleFaults proxied(ZooKeeperEnsemble ensemble) {
        return new EnsembleFaults(ensemble);
    }

    /** The connect string through the proxies. */
    String proxiedConnectString() {
        return proxiedAddresses();
    }

    @Override
    public Set<Fault> supported() {
        Set<Fault> all = EnumSet.copyOf(super.supported());
        all.add(Fault.EXPIRE_SESSION);
        return all;
    }

    @Override
    protected void awaitRestarted() {
        ensemble.awaitLeader(Duration.ofSeconds(60));
    }

    @Override
    public void expireSession(LockProvider provider) {
        ZooKeeperSessions.expire(provider, ensemble.connectString());
    }

    @Override
    public String toString() {
        return "EnsembleFaults" + ensemble.modes();
    }
}
