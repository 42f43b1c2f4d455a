package io.lockstep.jdbc;

import io.lockstep.LockProvider;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.servers.LocalServer;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;

/**
 * The kit against session mode on an in-memory H2 database shared by every provider of the test. H2 in
 * memory lives in this JVM, so there are no server faults to inject and no child-JVM holders.
 */
@DisplayName("jdbc session mode passes the compatibility kit on H2 in memory")
class H2SessionCompatibilityTest extends LockProviderCompatibilityKit {

    private static final String URL = "jdbc:h2:mem:lockstep-session;DB_CLOSE_DELAY=-1";

    @Override
    protected LockProvider newProvider() {
        return KitRuntimes.open(this, URL + "?mode=session&createSchema=true&callTimeout=2s");
    }

    @Override
    protected Optional<LockProvider> newUnreachableProvider() {
        return Optional.of(KitRuntimes.open(
                this,
                "jdbc:h2:tcp://127.0.0.1:" + LocalServer.freePort() + "/mem:nowhere?mode=session&callTimeout=1s"));
    }
}
