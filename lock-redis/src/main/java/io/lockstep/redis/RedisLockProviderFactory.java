package io.lockstep.redis;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.spi.LockProviderFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;

/**
 * Builds {@link RedisLockProvider}s from {@code redis://[user:password@]host[:port][/database]} and
 * {@code rediss://...} (TLS) URIs. Query parameters: {@code keyPrefix} (default {@code lockstep:}),
 * {@code timeout} (connect and socket timeout, default {@code 2s}), {@code poolSize} (connections,
 * one of them for release notifications, default 16); for {@code rediss}:
 * {@code trustStore} and {@code trustStorePassword} (a PKCS12 or JKS file of trusted certificates;
 * default the JVM's), {@code verifyHostname} (default {@code true}).
 */
public final class RedisLockProviderFactory implements LockProviderFactory {

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss");
    }

    @Override
    public LockProvider create(LockConfig config) {
        URI uri = config.uri();
        String host = uri.getHost();
        if (host == null || host.isBlank()) {
            throw new LockConfigurationException(
                    "host is missing in " + LockConfig.redacted(uri) + "; expected redis://host:port");
        }
        int port = uri.getPort() == -1 ? 6379 : uri.getPort();
        int database = database(uri);
        Duration timeout = config.durationProperty("timeout", Duration.ofSeconds(2));
        if (timeout.isZero() || timeout.isNegative() || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
            throw new LockConfigurationException("timeout must be between 1 ms and 5 minutes, was " + timeout);
        }
        String prefix;
        try {
            prefix = RedisLockProvider.Builder.requireValidPrefix(
                    config.property("keyPrefix").orElse(RedisLockProvider.DEFAULT_KEY_PREFIX));
        } catch (IllegalArgumentException e) {
            throw new LockConfigurationException(e.getMessage(), e);
        }
        boolean tls = "rediss".equals(config.scheme());
        DefaultJedisClientConfig.Builder client = DefaultJedisClientConfig.builder()
                .ssl(tls)
                .database(database)
                .connectionTimeoutMillis((int) timeout.toMillis())
                .socketTimeoutMillis((int) timeout.toMillis())
                .clientName("lockstep");
        configureTls(config, tls, client);
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null && !userInfo.isEmpty()) {
            int colon = userInfo.indexOf(':');
            String user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
            String password = colon < 0 ? null : decode(userInfo.substring(colon + 1));
            if (password == null) {
                client.password(user); // redis://secret@host: a password without a user, as redis-cli reads it
            } else {
                if (!user.isEmpty()) {
                    client.user(user);
                }
                client.password(password);
            }
        }
        String where = host + ":" + port;
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(config.intProperty("poolSize", 16, 2, 1024));
        pool.setMaxIdle(pool.getMaxTotal());
        JedisPooled jedis = new JedisPooled(new HostAndPort(host, port), client.build(), pool);
        return RedisLockProvider.builder(jedis)
                .keyPrefix(prefix)
                .runtime(config.runtime())
                .closeClient(true)
                .describedAs(where)
                .build();
    }

    private static void configureTls(LockConfig config, boolean tls, DefaultJedisClientConfig.Builder client) {
        Optional<String> trustStore = config.property("trustStore");
        boolean verifyHostname = config.booleanProperty("verifyHostname", true);
        if (!tls) {
            if (trustStore.isPresent() || config.property("verifyHostname").isPresent()) {
                throw new LockConfigurationException(
                        "trustStore and verifyHostname need a rediss:// URI, was " + LockConfig.redacted(config.uri()));
            }
            return;
        }
        if (verifyHostname) {
            SSLParameters parameters = new SSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            client.sslParameters(parameters);
        }
        if (trustStore.isPresent()) {
            client.sslSocketFactory(socketFactory(
                    trustStore.get(), config.property("trustStorePassword").orElse("")));
        }
    }

    private static SSLSocketFactory socketFactory(String path, String password) {
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(in, password.toCharArray());
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context.getSocketFactory();
        } catch (IOException | GeneralSecurityException e) {
            throw new LockConfigurationException("trustStore '" + path + "' could not be read: " + e.getMessage(), e);
        }
    }

    private static int database(URI uri) {
        String path = uri.getPath();
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
            throw new LockConfigurationException("database must be a number >= 0 after the port, was '"
                    + path.substring(1) + "' in " + LockConfig.redacted(uri));
        }
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
