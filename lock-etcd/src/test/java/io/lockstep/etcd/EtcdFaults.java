package io.lockstep.etcd;

import io.etcd.jetcd.Client;
import io.lockstep.LockProvider;
import io.lockstep.tck.faults.LocalServerFaults;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.EtcdServer;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The kit's faults on one etcd server the test started, whose clients connect through a {@link
 * TcpProxy} (see {@link LocalServerFaults}: pause, kill, partition, latency and lost replies, all really
 * injected), plus {@link Fault#EXPIRE_SESSION} by revoking the holder's session leases from outside,
 * through an administrative client that connects to the server directly.
 */
final class EtcdFaults extends LocalServerFaults {

    private final Client admin;

    EtcdFaults(EtcdServer etcd, TcpProxy proxy, Client admin) {
        super(etcd, proxy);
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
        revokeSessions(provider, admin);
    }

    /** Revokes every session lease of {@code provider} on etcd, through {@code admin}. */
    static void revokeSessions(LockProvider provider, Client admin) {
        if (!(provider instanceof EtcdLockProvider etcd)) {
            throw new IllegalArgumentException("not an etcd provider: " + provider);
        }
        for (long lease : etcd.sessionLeaseIds()) {
            try {
                admin.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError("could not revoke lease " + lease + ": " + e, e);
            }
        }
    }
}
