package io.lockstep.redlock.internal;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.redlock.RedlockOptions;
import io.lockstep.spi.TlsSettings;
import io.lockstep.spi.UriAuthority;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;

/**
 * A parsed {@code redlock://[[user]:password@]h1:p1,h2:p2,...[/db]?settings} URI. A multi-host authority
 * is not a server-based authority to {@link URI}, so it is read raw ({@link UriAuthority}); user info
 * is percent-decoded as RFC 3986 says ({@code +} is a plus sign). An unknown setting is an error.
 *
 * @param nodes the nodes, in order
 * @param clientConfig credentials, TLS, timeouts and database for every node
 * @param options the Redlock settings
 */
public record RedlockUri(List<HostAndPort> nodes, JedisClientConfig clientConfig, RedlockOptions options) {

    private static final int DEFAULT_PORT = 6379;

    /** Every setting a redlock URI may have. */
    static final List<String> SETTINGS = Stream.concat(
                    Stream.of(
                            "driftFactor",
                            "keyPrefix",
                            "nodeTimeout",
                            "minNodeTimeout",
                            "maxNodeTimeout",
                            "retryDelay",
                            "maxLeaseTime",
                            "persistent",
                            "quorum",
                            "maxInFlight",
                            "connectTimeout",
                            "socketTimeout",
                            "ssl",
                            "database",
                            "clientName"),
                    TlsSettings.SETTINGS.stream())
            .toList();

    /**
     * Parses {@code config}'s URI and settings.
     *
     * @throws LockConfigurationException naming the bad part and its value (never a password)
     */
    public static RedlockUri parse(LockConfig config) {
        URI uri = config.uri();
        String where = LockConfig.redacted(uri);
        if (!"redlock".equals(config.scheme())) {
            throw new LockConfigurationException("scheme must be redlock, was '" + config.scheme() + "' in " + where);
        }
        config.requireKnownSettings(SETTINGS);
        UriAuthority authority = UriAuthority.parse(config, DEFAULT_PORT, "nodes");
        List<HostAndPort> nodes = authority.hosts().stream()
                .map(h -> new HostAndPort(h.host(), h.port()))
                .toList();
        RedlockOptions options = options(config, where);
        TlsSettings tls = TlsSettings.read(config, config.booleanProperty("ssl", false), "ssl=true");
        DefaultJedisClientConfig.Builder client = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(millis(config, "connectTimeout", Duration.ofSeconds(1)))
                .socketTimeoutMillis(millis(config, "socketTimeout", Duration.ofSeconds(2)))
                .database(database(config, uri, where))
                .ssl(tls.enabled())
                .clientName(config.property("clientName").orElse("lockstep-redlock"));
        if (tls.enabled()) {
            // Jedis checks no host name itself: without this any certificate a trusted CA issued would do.
            client.sslParameters(tls.sslParameters());
            tls.socketFactory().ifPresent(client::sslSocketFactory);
        }
        authority.user().ifPresent(client::user);
        authority.password().ifPresent(client::password);
        return new RedlockUri(nodes, client.build(), options);
    }

    private static RedlockOptions options(LockConfig config, String where) {
        RedlockOptions options = RedlockOptions.defaults();
        try {
            String drift = config.property("driftFactor").orElse(null);
            if (drift != null) {
                double value;
                try {
                    value = Double.parseDouble(drift.strip());
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("driftFactor must be a number in [0, 0.5), was '" + drift + "'");
                }
                options = options.withDriftFactor(value);
            }
            String prefix = config.property("keyPrefix").orElse(null);
            if (prefix != null) {
                options = options.withKeyPrefix(prefix);
            }
            boolean ranged = config.property("minNodeTimeout").isPresent()
                    || config.property("maxNodeTimeout").isPresent();
            if (config.property("nodeTimeout").isPresent()) {
                if (ranged) {
                    throw new IllegalArgumentException("nodeTimeout fixes the node timeout and minNodeTimeout or"
                            + " maxNodeTimeout bound one that follows the lease time: set one or the other");
                }
                options = options.withNodeTimeout(config.durationProperty("nodeTimeout", Duration.ZERO));
            }
            if (ranged) {
                options = options.withNodeTimeoutRange(
                        config.durationProperty("minNodeTimeout", RedlockOptions.DEFAULT_MIN_NODE_TIMEOUT),
                        config.durationProperty("maxNodeTimeout", RedlockOptions.DEFAULT_MAX_NODE_TIMEOUT));
            }
            if (config.property("retryDelay").isPresent()) {
                options = options.withRetryDelay(config.durationProperty("retryDelay", Duration.ZERO));
            }
            if (config.property("maxLeaseTime").isPresent()) {
                options = options.withMaxLeaseTime(config.durationProperty("maxLeaseTime", Duration.ZERO));
            }
            options = options.withPersistentNodes(config.booleanProperty("persistent", false));
            if (config.property("quorum").isPresent()) {
                options = options.withQuorum(config.intProperty("quorum", 0, 1, 1000));
            }
            if (config.property("maxInFlight").isPresent()) {
                options = options.withMaxInFlight(config.intProperty("maxInFlight", 0, 1, 10_000));
            }
        } catch (IllegalArgumentException e) {
            throw new LockConfigurationException(e.getMessage() + " in " + where, e);
        }
        return options;
    }

    private static int millis(LockConfig config, String key, Duration defaultValue) {
        Duration value = config.durationProperty(key, defaultValue);
        if (value.isNegative() || value.isZero() || value.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new LockConfigurationException(key + " must be between 1ms and 10m, was " + value);
        }
        return (int) value.toMillis();
    }

    private static int database(LockConfig config, URI uri, String where) {
        String path = uri.getRawPath();
        int fromPath = 0;
        if (path != null && !path.isEmpty() && !"/".equals(path)) {
            try {
                fromPath = Integer.parseInt(path.substring(1));
            } catch (NumberFormatException e) {
                throw new LockConfigurationException(
                        "database (the URI path) must be a number, was '" + path.substring(1) + "' in " + where);
            }
        }
        return config.intProperty("database", fromPath, 0, 10_000);
    }
}
