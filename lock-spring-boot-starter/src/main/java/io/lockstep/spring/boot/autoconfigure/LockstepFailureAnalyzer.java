package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.LockConfigurationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a start-up that failed because a provider could not be built: Lockstep's own message (it
 * names the setting, or the artifact to add for a scheme no module serves, never a password) and what to
 * do.
 */
final class LockstepFailureAnalyzer extends AbstractFailureAnalyzer<LockConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, LockConfigurationException cause) {
        return new FailureAnalysis(
                "A Lockstep lock provider could not be built: " + cause.getMessage(),
                "Check lockstep.uri and lockstep.providers.*.uri (any URI io.lockstep.Locks.open accepts),"
                        + " and that the backend's module (io.lockstep:lock-redis, lock-redlock, lock-etcd,"
                        + " lock-zookeeper or lock-jdbc) is on the class path.",
                cause);
    }
}
