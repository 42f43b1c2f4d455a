package io.lockstep.etcd;

import io.etcd.jetcd.Client;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.TcpProxy;
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
    private static List<TcpProxy> proxies;
    private static Client admin;

    @BeforeAll
    static void startCluster() {
        cluster = EtcdCluster.start(3);
        proxies = cluster.members().stream()
                .map(m -> TcpProxy.start(m.host(), m.port()))
                .toList();
        admin = Client.builder()
                .endpoints(cluster.endpoints().toArray(String[]::new))
                .build();
    }

    @AfterAll
    static void stopCluster() {
        if (admin != null) {
            admin.close();
        }
        if (proxies != null) {
            proxies.forEach(TcpProxy::close);
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    protected LockProvider newProvider() {
        String endpoints = proxies.stream().map(p -> p.host() + ":" + p.port()).collect(Collectors.joining(","));
        return Locks.open("etcd://" + endpoints + "?timeout=500ms");
    }

    /** As on one member: a dead holder's lock frees at its session's TTL plus etcd's expiry check. */
    @Override
    protected Duration margin() {
        return timing.millis(1_200);
    }

    @Override
    protected BackendFaults faults() {
        return new ClusterFaults(cluster, proxies, admin);
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of(cluster.uri() + "?timeout=500ms");
    }

    static String endpointsOf(List<EtcdServer> members) {
        return members.stream().map(m -> m.host() + ":" + m.port()).collect(Collectors.joining(","));
    }
}
