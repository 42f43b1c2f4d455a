package io.lockstep.etcd;

import io.etcd.jetcd.Client;
import io.lockstep.LockProvider;
import io.lockstep.tck.faults.BackendFaults;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@link BackendFaults} for etcd: whatever {@code base} can do, plus {@link Fault#EXPIRE_SESSION} by
 * revoking the holder's session leases from outside, through an administrative client.
 */
final class EtcdFaults implements BackendFaults {

    private final BackendFaults base;
    private final Client admin;

    EtcdFaults(BackendFaults base, Client admin) {
        this.base = base;
        this.admin = admin;
    }

    @Override
    public Set<Fault> supported() {
        Set<Fault> all = EnumSet.of(Fault.EXPIRE_SESSION);
        all.addAll(base.supported());
        return all;
    }

    @Override
    public void pauseServer() {
        base.pauseServer();
    }

    @Override
    public void resumeServer() {
        base.resumeServer();
    }

    @Override
    public void killServer() {
        base.killServer();
    }

    @Override
    public void restartServer() {
        base.restartServer();
    }

    @Override
    public void partition() {
        base.partition();
    }

    @Override
    public void heal() {
        base.heal();
    }

    @Override
    public void expireSession(LockProvider provider) {
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

    @Override
    public String toString() {
        return "EtcdFaults[" + base + "]";
    }
}
