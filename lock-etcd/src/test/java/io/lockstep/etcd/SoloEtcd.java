package io.lockstep.etcd;

import io.etcd.jetcd.Client;
import io.lockstep.tck.servers.EtcdServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One etcd member for a test class, with a raw jetcd client on it for the test's own reads and writes:
 * started before the class's first test, closed after its last. Register it as a static field with
 * {@code @RegisterExtension}.
 */
public final class SoloEtcd implements BeforeAllCallback, AfterAllCallback {

    private @Nullable EtcdServer server;
    private @Nullable Client admin;

    @Override
    public void beforeAll(ExtensionContext context) {
        server = EtcdServer.start();
        admin = Client.builder().endpoints(server.endpoint()).build();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        try {
            if (admin != null) {
                admin.close();
            }
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    /** The member. */
    public EtcdServer server() {
        if (server == null) {
            throw new IllegalStateException("SoloEtcd is used before its class's tests started");
        }
        return server;
    }

    /** A raw jetcd client on the member. */
    public Client admin() {
        if (admin == null) {
            throw new IllegalStateException("SoloEtcd is used before its class's tests started");
        }
        return admin;
    }
}
