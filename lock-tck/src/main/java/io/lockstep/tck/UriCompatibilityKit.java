package io.lockstep.tck;

import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.reference.InMemoryLockProviderFactory;
import io.lockstep.tck.reference.InMemoryLockStore;
import java.net.URI;
import java.util.Optional;

/**
 * The kit against whatever provider {@link Locks#open(String)} finds for the URI in the system property
 * {@value #URI_PROPERTY}: how {@link TckLauncher} checks a staging backend, and how a build can run the
 * kit without writing a class ({@code -Dtest=...}).
 *
 * <p>Each {@link #newProvider()} opens a new provider on the URI; child-JVM scenarios open it too, so
 * the provider's artifact must be on the class path. Faults are not injected into a backend the kit did
 * not start ({@link BackendFaults#NONE}), except for {@code mem://}, the reference store in this JVM.
 */
public class UriCompatibilityKit extends LockProviderCompatibilityKit {

    /** The system property holding the URI under test. */
    public static final String URI_PROPERTY = "lockstep.tck.uri";

    /** Reads the URI when JUnit creates the test instance. */
    public UriCompatibilityKit() {}

    /**
     * The URI under test.
     *
     * @throws LockConfigurationException if {@value #URI_PROPERTY} is not set
     */
    protected String uri() {
        String uri = System.getProperty(URI_PROPERTY, "").strip();
        if (uri.isEmpty()) {
            throw new LockConfigurationException(URI_PROPERTY
                    + " must be set to the URI of the backend to check, for example redis://localhost:6379");
        }
        return uri;
    }

    @Override
    protected LockProvider newProvider() {
        return Locks.open(uri());
    }

    @Override
    protected BackendFaults faults() {
        return memStore().map(InMemoryLockStore::faults).orElse(BackendFaults.NONE);
    }

    @Override
    protected Optional<String> childJvmUri() {
        // A mem:// store lives in one JVM: a child would hold a lock of its own.
        return memStore().isPresent() ? Optional.empty() : Optional.of(uri());
    }

    private Optional<InMemoryLockStore> memStore() {
        URI parsed = URI.create(uri());
        if (!InMemoryLockProviderFactory.SCHEME.equalsIgnoreCase(parsed.getScheme()) || parsed.getHost() == null) {
            return Optional.empty();
        }
        return Optional.of(InMemoryLockStore.named(parsed.getHost()));
    }
}
