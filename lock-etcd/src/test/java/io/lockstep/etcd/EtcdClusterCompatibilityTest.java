package io.lockstep.etcd;

import io.etcd.jetcd.Client;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.servers.EtcdCluster;
import io.lockstep.tck.servers.EtcdServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("lock-etcd passes the compatibility kit on a real three-member etcd cluster, faults included")
class EtcdClusterCompatibilityTest extends LockProviderCompatibilityKit {

    private static EtcdCluster cluster;
    private static ClusterFaults faults;
    private static Client admin;

    @BeforeAll
    static void startCluster() {
        cluster = EtcdCluster.start(3);
        admin = Client.builder()
                .endpoints(cluster.endpoints().toArray(String[]::new))
                .build();
        faults = new ClusterFaults(cluster, admin);
    }

    @AfterAll
    static void stopCluster() {
        if (admin != null) {
            admin.close();
        }
        if (faults != null) {
            faults.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    protected LockProvider newProvider() {
        return Locks.open("etcd://" + faults.proxiedAddresses() + "?timeout=2s");
    }

    /** As on one member: a dead holder's lock frees at its session's TTL plus etcd's expiry check. */
    @Override
    protected Duration margin() {
        return timing.millis(1_200);
    }

    @Override
    protected BackendFaults faults() {
        return faults;
    }

    @Override
    protected Optional<String> childJvmUri() {
        // 500 ms, not 2 s: a cold child JVM's first lease grant can take longer than the 1 s session it
        // asks for; a short deadline fails that grant and the retry, warm, is fast, while a 2 s one waits
        // for a session that is already over (seen once in a full run: "could not be kept alive").
        return Optional.of(cluster.uri() + "?timeout=500ms");
    }

    static String endpointsOf(List<EtcdServer> members) {
        return members.stream().map(m -> m.host() + ":" + m.port()).collect(Collectors.joining(","));
    }

    /**
     * The clock group runs in {@link EtcdCompatibilityTest}: on one member or three the session lease is
     * counted by the leader's clock, which libfaketime cannot reach (Go), and the client's keep-alive and
     * validity are the same code; a cluster changes who counts after a leader change, not how fast.
     */
    @Override
    protected Optional<Class<? extends LockProviderCompatibilityKit>> clockGroupRunsIn() {
        return Optional.of(EtcdCompatibilityTest.class);
    }
}
