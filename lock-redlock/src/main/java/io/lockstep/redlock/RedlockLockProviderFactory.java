package io.lockstep.redlock;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.redlock.internal.RedlockUri;
import io.lockstep.spi.LockProviderFactory;
import java.util.Set;

/**
 * Builds {@link RedlockLockProvider}s for {@code redlock://} URIs; found by {@link java.util.ServiceLoader}.
 *
 * <pre>
 * redlock://[user:password@]host1:port1,host2:port2,host3:port3[/database]?driftFactor=0.01&amp;keyPrefix=
 * </pre>
 *
 * <p>Settings (query parameters or {@link LockConfig#withProperty}), any other is an error:
 * {@code driftFactor} (0.01, in [0, 0.5)), {@code keyPrefix} (empty: spec-compatible keys),
 * {@code nodeTimeout} (a tenth of the lease time, within {@code minNodeTimeout} (10ms) and
 * {@code maxNodeTimeout} (250ms); a fixed {@code nodeTimeout} excludes the two), {@code retryDelay} (100ms),
 * {@code maxLeaseTime} (60s: how long a restarted node sits out), {@code persistent} (false: nodes run
 * {@code appendfsync always}), {@code quorum} (the majority), {@code connectTimeout} (1s),
 * {@code socketTimeout} (2s), {@code ssl} (false), {@code database} (0), {@code clientName}; with
 * {@code ssl=true}: {@code verifyHostname} (true), {@code trustStore} and {@code trustStorePassword}
 * (the JVM's trust store by default), as for {@code rediss://} ({@link io.lockstep.spi.TlsSettings}).
 * User info is percent-decoded as RFC 3986 says ({@code +} is a plus sign). Stateless and
 * thread-safe.
 */
public final class RedlockLockProviderFactory implements LockProviderFactory {

    /** For {@link java.util.ServiceLoader}. */
    public RedlockLockProviderFactory() {}

    @Override
    public String name() {
        return "redlock";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redlock");
    }

    /**
     * Builds a provider; nothing is connected until the first lock, so nodes may be down at this point.
     *
     * @throws LockConfigurationException for a bad URI or setting, naming it and its value
     */
    @Override
    public LockProvider create(LockConfig config) {
        RedlockUri parsed = RedlockUri.parse(config);
        try {
            return RedlockLockProvider.connect(
                    parsed.nodes(), parsed.clientConfig(), parsed.options(), config.runtime());
        } catch (IllegalArgumentException e) {
            throw new LockConfigurationException(e.getMessage() + " in " + LockConfig.redacted(config.uri()), e);
        }
    }

    @Override
    public String toString() {
        return "RedlockLockProviderFactory[" + Locks.PROVIDER_PROPERTY + "=" + name() + "]";
    }

    /** {@inheritDoc} */
    @Override
    public java.util.List<io.lockstep.spi.ProviderKind> kinds() {
        return java.util.List.of(new io.lockstep.spi.ProviderKind(
                "redlock", "redlock://h1:6379,h2:6379,h3:6379", io.lockstep.redlock.internal.RedlockBackend.INFO));
    }
}
