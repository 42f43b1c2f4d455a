package io.lockstep.etcd;

import io.etcd.jetcd.Client;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.EtcdServer;
import io.lockstep.tck.servers.LocalServer;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("lock-etcd passes the compatibility kit on a real one-member etcd, faults included")
class EtcdCompatibilityTest extends LockProviderCompatibilityKit {

    private static EtcdServer etcd;
    private static TcpProxy proxy;
    private static Client admin;

    @BeforeAll
    static void startEtcd() {
        etcd = EtcdServer.start();
        proxy = TcpProxy.start(etcd.host(), etcd.port());
        admin = Client.builder().endpoints(etcd.endpoint()).build();
    }

    @AfterAll
    static void stopEtcd() {
        if (admin != null) {
            admin.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    @Override
    protected LockProvider newProvider() {
        // Through the proxy, so the kit can partition clients from the server.
        return Locks.open("etcd://" + proxy.host() + ":" + proxy.port() + "?timeout=2s");
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(Locks.open("etcd://127.0.0.1:" + LocalServer.freePort() + "?timeout=2s"));
    }

    /**
     * A holder that dies frees its lock when etcd expires its session lease: 1.5 × the lease time in
     * whole seconds after its last keep-alive, plus etcd's expiry check (every 500 ms).
     */
    @Override
    protected Duration margin() {
        return timing.millis(1_200);
    }

    @Override
    protected BackendFaults faults() {
        return new EtcdFaults(etcd, proxy, admin);
    }

    @Override
    protected Optional<String> childJvmUri() {
        // 500 ms, not 2 s: a cold child JVM's first lease grant can take longer than the 1 s session it
        // asks for; a short deadline fails that grant and the retry, warm, is fast, while a 2 s one waits
        // for a session that is already over (seen once in a full run: "could not be kept alive").
        return Optional.of(etcd.uri() + "?timeout=500ms");
    }
}
