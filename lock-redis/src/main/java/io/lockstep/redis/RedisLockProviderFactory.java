package io.lockstep.redis;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.redis.internal.SentinelTopology;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.LockProviderFactory;
import io.lockstep.spi.TlsSettings;
import io.lockstep.spi.UriAuthority;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisSentineled;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Builds {@link RedisLockProvider}s from {@code redis://[[user]:password@]host[:port][/database]} and
 * {@code rediss://...} (TLS) URIs; {@code redis-sentinel://[[user]:password@]s1:26379,s2:26379/masterName[/database]}
 * for a primary that Sentinel watches (leases it granted are reported lost on a failover unless
 * {@code waitReplicas} confirmed them); {@code redis-cluster://[[user]:password@]h1:7000,h2:7001} for a Redis
 * Cluster ({@code rediss-sentinel}, {@code rediss-cluster} for TLS). The authority is read from the raw URI, so host names with
 * {@code _} work, and user info is percent-decoded as RFC 3986 says ({@code +} is a plus sign).
 *
 * <p>Settings (query parameters), any other is an error: {@code keyPrefix} (default {@code lockstep:}),
 * {@code timeout} (connect and socket timeout, and the longest wait for a pooled connection; default
 * {@code 2s}), {@code poolSize} (connections, one of them for release notifications and, from 4 on,
 * one for the oldest waiter's grant inbox, see {@link RedisLockProvider.Builder#inboxWait}; default 16),
 * {@code driftFactor} (clock drift allowance, default 0.01: validity is {@code TTL − (TTL × driftFactor
 * + 2 ms)}); for {@code rediss}: {@code trustStore} and {@code trustStorePassword} (a PKCS12 or JKS file
 * of trusted certificates; default the JVM's), {@code verifyHostname} (default {@code true}); see
 * {@link TlsSettings}; {@code waitReplicas} (0..16, default 0) and {@code waitTimeout} (default 500 ms, at most
 * half of {@code timeout}): acquire and extend count only once {@code WAIT} confirms that many replicas;
 * {@code sentinelAuth} (default false: the URI's credentials go to the primary only). Stateless and thread-safe.
 */
public final class RedisLockProviderFactory implements LockProviderFactory {

    /** Every setting this factory reads. */
    static final List<String> SETTINGS = Stream.concat(
                    Stream.of(
                            "keyPrefix",
                            "timeout",
                            "poolSize",
                            "driftFactor",
                            "waitReplicas",
                            "waitTimeout",
                            "sentinelAuth"),
                    TlsSettings.SETTINGS.stream())
            .toList();

    /** For {@link java.util.ServiceLoader}. */
    public RedisLockProviderFactory() {}

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel", "redis-cluster", "rediss-cluster");
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
        String scheme = config.scheme();
        boolean sentinel = scheme.endsWith("-sentinel");
        boolean cluster = scheme.endsWith("-cluster");
        UriAuthority authority = UriAuthority.parse(config, sentinel ? 26379 : 6379, sentinel ? "sentinel" : "host");
        if (!sentinel && !cluster && authority.hosts().size() != 1) {
            throw new LockConfigurationException("host must be one host, was "
                    + authority.hosts().size() + " in " + where
                    + "; for several Redis nodes use redlock://, redis-sentinel:// or redis-cluster://");
        }
        Duration timeout = config.durationProperty("timeout", Duration.ofSeconds(2));
        if (timeout.isZero() || timeout.isNegative() || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
            throw new LockConfigurationException("timeout must be between 1 ms and 5 minutes, was " + timeout);
        }
        int waitReplicas = config.intProperty("waitReplicas", 0, 0, 16);
        Duration defaultWait = timeout.dividedBy(2).compareTo(Duration.ofMillis(500)) < 0
                ? timeout.dividedBy(2)
                : Duration.ofMillis(500);
        Duration waitTimeout = config.durationProperty("waitTimeout", defaultWait);
        if (waitTimeout.toMillis() < 1 || waitTimeout.compareTo(timeout) >= 0) {
            throw new LockConfigurationException("waitTimeout must be at least 1 ms and shorter than timeout ("
                    + timeout + "), because WAIT blocks the connection, was " + waitTimeout + " in " + where);
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
        String sentinelAuthText =
                config.property("sentinelAuth").orElse("false").strip();
        if (!sentinelAuthText.equals("true") && !sentinelAuthText.equals("false")) {
            throw new LockConfigurationException(
                    "sentinelAuth must be true or false, was '" + sentinelAuthText + "' in " + where);
        }
        boolean sentinelAuth = sentinelAuthText.equals("true");
        TlsSettings tls = TlsSettings.read(
                config,
                scheme.startsWith("rediss"),
                "a " + (scheme.startsWith("rediss") ? scheme : "rediss" + scheme.substring("redis".length()))
                        + ":// URI");
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(poolSize);
        pool.setMaxIdle(poolSize);
        // A borrow waits at most the command timeout: a stalled server fails callers within their bound
        // instead of queueing them behind each other's socket timeouts.
        pool.setMaxWait(timeout);
        RedisLockProvider.Builder builder;
        String described;
        if (sentinel) {
            String masterName = sentinelPath(uri, where);
            JedisClientConfig primaryConfig =
                    clientConfig(tls, timeout, authority, database(sentinelDatabase(uri), where), true);
            JedisClientConfig sentinelConfig = clientConfig(tls, timeout, authority, 0, sentinelAuth);
            List<HostAndPort> sentinels = authority.hosts().stream()
                    .map(h -> new HostAndPort(h.host(), h.port()))
                    .toList();
            described = "primary '" + masterName + "' of sentinels " + authority.hosts();
            JedisSentineled jedis;
            try {
                jedis = new JedisSentineled(
                        masterName, primaryConfig, pool, new LinkedHashSet<>(sentinels), sentinelConfig);
            } catch (JedisException e) {
                throw new BackendUnavailableException(
                        "no sentinel of " + where + " named a primary for '" + masterName + "': " + e.getMessage()
                                + tlsHint(tls, e),
                        e);
            }
            builder = RedisLockProvider.builder(jedis)
                    .topology(new SentinelTopology(jedis, masterName, sentinels, sentinelConfig));
        } else if (cluster) {
            String path = uri.getRawPath();
            if (path != null && !path.isEmpty() && !path.equals("/")) {
                throw new LockConfigurationException(
                        "a Redis Cluster has no database: nothing may follow the nodes, was '" + path + "' in "
                                + where);
            }
            Set<HostAndPort> nodes = new LinkedHashSet<>();
            authority.hosts().forEach(h -> nodes.add(new HostAndPort(h.host(), h.port())));
            described = "cluster " + authority.hosts();
            // MOVED and ASK are followed by JedisCluster, within 5 attempts and the command timeout.
            JedisCluster jedis;
            try {
                jedis = new JedisCluster(nodes, clientConfig(tls, timeout, authority, 0, true), 5, timeout, pool);
            } catch (JedisException e) {
                throw new BackendUnavailableException(
                        "no node of the Redis Cluster " + where + " answered: " + e.getMessage() + tlsHint(tls, e), e);
            }
            builder = RedisLockProvider.builder(jedis).closeClient(true);
        } else {
            UriAuthority.HostPort host = authority.hosts().get(0);
            JedisPooled jedis = new JedisPooled(
                    new HostAndPort(host.host(), host.port()),
                    clientConfig(tls, timeout, authority, database(uri.getRawPath(), where), true),
                    pool);
            described = host.toString();
            builder = RedisLockProvider.builder(jedis).closeClient(true);
        }
        return builder.keyPrefix(prefix)
                .inboxWait(inboxWait(timeout, poolSize))
                .driftFactor(driftFactor)
                .waitReplicas(waitReplicas, waitTimeout)
                .runtime(config.runtime())
                .describedAs(described)
                .build();
    }

    /**
     * How long the oldest waiter blocks on its grant inbox per request: the default, or half the socket
     * timeout if that is shorter; none with fewer than {@link #MIN_POOL_FOR_INBOX} connections, which keep
     * one for notices and must not give a second to a waiter, nor with a socket timeout so short that half
     * of it is under {@link RedisLockProvider#MIN_INBOX_WAIT_MILLIS}.
     */
    static Duration inboxWait(Duration timeout, int poolSize) {
        Duration half = timeout.dividedBy(2);
        if (poolSize < MIN_POOL_FOR_INBOX || half.toMillis() < RedisLockProvider.MIN_INBOX_WAIT_MILLIS) {
            return Duration.ZERO;
        }
        Duration preferred = Duration.ofMillis(RedisLockProvider.DEFAULT_INBOX_WAIT_MILLIS);
        return half.compareTo(preferred) < 0 ? half : preferred;
    }

    /** The smallest pool that lends a connection to a waiter's grant inbox: notices, the inbox, two for calls. */
    static final int MIN_POOL_FOR_INBOX = 4;

    private static JedisClientConfig clientConfig(
            TlsSettings tls, Duration timeout, UriAuthority authority, int database, boolean withCredentials) {
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
        if (withCredentials) {
            authority.user().ifPresent(client::user);
            authority.password().ifPresent(client::password);
        }
        return client.build();
    }

    /** The master name: the first path segment of a {@code redis-sentinel://} URI. */
    private static String sentinelPath(URI uri, String where) {
        String path = uri.getPath();
        String name = path == null || path.length() < 2 ? "" : path.substring(1).split("/", -1)[0];
        if (name.isBlank()) {
            throw new LockConfigurationException(
                    "masterName must follow the sentinels (redis-sentinel://host:26379,host2:26379/mymaster), was"
                            + " missing in " + where);
        }
        return name;
    }

    /** The optional database after the master name, as a path for {@link #database}. */
    private static String sentinelDatabase(URI uri) {
        String path = uri.getRawPath();
        int second = path == null ? -1 : path.indexOf('/', 1);
        return second < 0 ? "" : path.substring(second);
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

    private static int database(String path, String where) {
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

    /** {@inheritDoc} */
    @Override
    public java.util.List<io.lockstep.spi.ProviderKind> kinds() {
        return java.util.List.of(
                new io.lockstep.spi.ProviderKind(
                        "redis", "redis://host:6379, rediss://host:6380", io.lockstep.redis.internal.RedisBackend.INFO),
                new io.lockstep.spi.ProviderKind(
                        "redis-sentinel",
                        "redis-sentinel://s1:26379,s2:26379/mymaster (rediss-sentinel:// for TLS)",
                        io.lockstep.redis.internal.RedisBackend.INFO),
                new io.lockstep.spi.ProviderKind(
                        "redis-cluster",
                        "redis-cluster://h1:7000,h2:7001 (rediss-cluster:// for TLS)",
                        io.lockstep.redis.internal.RedisBackend.INFO));
    }

    /**
     * With TLS, what to check when no node answered: Jedis reports a rejected certificate as "all sentinels
     * down" or "could not initialize cluster slots cache" and may drop the handshake error, so it is named
     * when there is one and suggested when there is not. Empty without TLS.
     */
    private static String tlsHint(TlsSettings tls, Throwable e) {
        if (!tls.enabled()) {
            return "";
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof javax.net.ssl.SSLException) {
                return " (TLS handshake failed: " + t.getMessage() + ")";
            }
        }
        return " (over TLS: if the servers run, check that trustStore holds the CA of their certificates and"
                + " that the certificates name the host connected to, or set verifyHostname=false)";
    }
}
