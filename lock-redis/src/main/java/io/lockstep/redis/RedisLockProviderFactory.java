package io.lockstep.redis;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.LockProviderFactory;
import io.lockstep.spi.TlsSettings;
import io.lockstep.spi.UriAuthority;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;

/**
 * Builds {@link RedisLockProvider}s from {@code redis://[[user]:password@]host[:port][/database]} and
 * {@code rediss://...} (TLS) URIs. The authority is read from the raw URI, so host names with
 * {@code _} work, and user info is percent-decoded as RFC 3986 says ({@code +} is a plus sign).
 *
 * <p>Settings (query parameters), any other is an error: {@code keyPrefix} (default {@code lockstep:}),
 * {@code timeout} (connect and socket timeout, and the longest wait for a pooled connection; default
 * {@code 2s}), {@code poolSize} (connections, one of them for release notifications, default 16),
 * {@code driftFactor} (clock drift allowance, default 0.01: validity is {@code TTL − (TTL × driftFactor
 * + 2 ms)}); for {@code rediss}: {@code trustStore} and {@code trustStorePassword} (a PKCS12 or JKS file
 * of trusted certificates; default the JVM's), {@code verifyHostname} (default {@code true}); see
 * {@link TlsSettings}. Stateless and thread-safe.
 */
public final class RedisLockProviderFactory implements LockProviderFactory {

    /** Every setting this factory reads. */
    static final List<String> SETTINGS = Stream.concat(
                    Stream.of("keyPrefix", "timeout", "poolSize", "driftFactor"), TlsSettings.SETTINGS.stream())
            .toList();

    /** For {@link java.util.ServiceLoader}. */
    public RedisLockProviderFactory() {}

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss");
    }

    /**
     * Builds a provider; nothing is connected until the first lock.
     *
     * @throws LockConfigurationException for a bad URI or setting, naming it (never a password)
     */
    @Override
    public LockProvider create(LockConfig config) {
        config.requireKnownSettings(SETTINGS);
        URI uri = config.uri();
        String where = LockConfig.redacted(uri);
        UriAuthority authority = UriAuthority.parse(config, 6379, "host");
        if (authority.hosts().size() != 1) {
            throw new LockConfigurationException("host must be one host, was "
                    + authority.hosts().size() + " in " + where + "; for several Redis nodes use redlock://");
        }
        UriAuthority.HostPort host = authority.hosts().get(0);
        int database = database(uri, where);
        Duration timeout = config.durationProperty("timeout", Duration.ofSeconds(2));
        if (timeout.isZero() || timeout.isNegative() || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
            throw new LockConfigurationException("timeout must be between 1 ms and 5 minutes, was " + timeout);
        }
        String prefix;
        double driftFactor;
        try {
            prefix = RedisLockProvider.Builder.requireValidPrefix(
                    config.property("keyPrefix").orElse(RedisLockProvider.DEFAULT_KEY_PREFIX));
            driftFactor = driftFactor(config);
        } catch (IllegalArgumentException e) {
            throw new LockConfigurationException(e.getMessage() + " in " + where, e);
        }
        int poolSize = config.intProperty("poolSize", 16, 2, 1024);
        TlsSettings tls = TlsSettings.read(config, "rediss".equals(config.scheme()), "a rediss:// URI");
        DefaultJedisClientConfig.Builder client = DefaultJedisClientConfig.builder()
                .ssl(tls.enabled())
                .database(database)
                .connectionTimeoutMillis((int) timeout.toMillis())
                .socketTimeoutMillis((int) timeout.toMillis())
                .clientName("lockstep");
        if (tls.enabled()) {
            client.sslParameters(tls.sslParameters());
            tls.socketFactory().ifPresent(client::sslSocketFactory);
        }
        authority.user().ifPresent(client::user);
        authority.password().ifPresent(client::password);
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(poolSize);
        pool.setMaxIdle(poolSize);
        // A borrow waits at most the command timeout: a stalled server fails callers within their bound
        // instead of queueing them behind each other's socket timeouts.
        pool.setMaxWait(timeout);
        JedisPooled jedis = new JedisPooled(new HostAndPort(host.host(), host.port()), client.build(), pool);
        return RedisLockProvider.builder(jedis)
                .keyPrefix(prefix)
                .driftFactor(driftFactor)
                .runtime(config.runtime())
                .closeClient(true)
                .describedAs(host.toString())
                .build();
    }

    private static double driftFactor(LockConfig config) {
        String raw = config.property("driftFactor").orElse(null);
        if (raw == null) {
            return ClockDrift.DEFAULT_FACTOR;
        }
        try {
            return ClockDrift.requireFactor(Double.parseDouble(raw.strip()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("driftFactor must be a number in [0, 0.5), was '" + raw + "'", e);
        }
    }

    private static int database(URI uri, String where) {
        String path = uri.getRawPath();
        if (path == null || path.isEmpty() || path.equals("/")) {
            return 0;
        }
        try {
            int db = Integer.parseInt(path.substring(1));
            if (db < 0) {
                throw new NumberFormatException();
            }
            return db;
        } catch (NumberFormatException e) {
            throw new LockConfigurationException(
                    "database must be a number >= 0 after the port, was '" + path.substring(1) + "' in " + where);
        }
    }
}
