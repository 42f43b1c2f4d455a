package io.lockstep.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.spi.ClockDrift;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;

/**
 * Builds {@link EtcdLockProvider}s from {@code etcd://[user:password@]host:port[,host:port...]} and
 * {@code etcds://...} (TLS) URIs. Query parameters (or {@link LockConfig} properties): {@code keyPrefix}
 * (default {@code lockstep/}), {@code timeout} (bound of one round trip, default {@code 2s}), {@code
 * driftFactor} (clock drift allowance, in [0, 0.5), default 0.01: a session lease is counted valid for
 * {@code TTL − (TTL × driftFactor + 2 ms)} after each keep-alive, see {@link
 * EtcdLockProvider.Builder#driftFactor}), {@code user} and {@code password} (etcd authentication,
 * instead of the URI's user info); for {@code etcds}: {@code trustStore} and {@code trustStorePassword} (a
 * PKCS12 or JKS file of trusted certificates; default the JVM's) and {@code authority} (the name the
 * server's certificate must carry, default the host). Any other setting is rejected, naming the known
 * ones. Passwords never appear in messages.
 */
public final class EtcdLockProviderFactory implements LockProviderFactory {

    private static final Set<String> KNOWN = new TreeSet<>(List.of(
            "keyPrefix",
            "timeout",
            "driftFactor",
            "user",
            "password",
            "trustStore",
            "trustStorePassword",
            "authority",
            Locks.PROVIDER_PROPERTY));

    /**
     * The {@code driftFactor} setting, default {@link ClockDrift#DEFAULT_FACTOR}.
     *
     * @throws IllegalArgumentException naming {@code driftFactor} and the value if it is not a number in [0, 0.5)
     */
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

    @Override
    public String name() {
        return "etcd";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("etcd", "etcds");
    }

    @Override
    public LockProvider create(LockConfig config) {
        URI uri = config.uri();
        for (String key : config.properties().keySet()) {
            if (!KNOWN.contains(key)) {
                throw new LockConfigurationException(
                        "unknown setting '" + key + "' for etcd in " + LockConfig.redacted(uri) + "; known: " + KNOWN);
            }
        }
        boolean tls = "etcds".equals(config.scheme());
        String authority = uri.getRawAuthority();
        if (authority == null || authority.isBlank()) {
            throw new LockConfigurationException("endpoints are missing in " + LockConfig.redacted(uri)
                    + "; expected etcd://host:port[,host:port...]");
        }
        String path = uri.getRawPath();
        if (path != null && !path.isEmpty() && !path.equals("/")) {
            throw new LockConfigurationException("etcd URIs take no path, was '" + path + "' in "
                    + LockConfig.redacted(uri) + "; use keyPrefix to place the keys");
        }
        String user = null;
        String password = null;
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int colon = userInfo.indexOf(':');
            user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
            password = colon < 0 ? null : decode(userInfo.substring(colon + 1));
        }
        user = config.property("user").orElse(user);
        password = config.property("password").orElse(password);
        if ((user == null || user.isEmpty()) != (password == null)) {
            throw new LockConfigurationException("etcd authentication needs both a user and a password; "
                    + (password == null ? "user '" + user + "' has no password" : "the password has no user")
                    + " in " + LockConfig.redacted(uri));
        }
        List<String> endpoints = new ArrayList<>();
        List<String> hostPorts = new ArrayList<>();
        for (String hostPort : authority.split(",")) {
            String hp = hostPort.strip();
            if (hp.isEmpty()) {
                throw new LockConfigurationException("an empty endpoint in " + LockConfig.redacted(uri));
            }
            if (hp.lastIndexOf(':') < 0 || hp.endsWith("]")) {
                hp = hp + ":2379";
            }
            try {
                int port = Integer.parseInt(hp.substring(hp.lastIndexOf(':') + 1));
                if (port < 1 || port > 65535) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new LockConfigurationException("endpoint '" + hp + "' must be host:port with a port from 1 to "
                        + "65535, in " + LockConfig.redacted(uri));
            }
            hostPorts.add(hp);
            endpoints.add((tls ? "https://" : "http://") + hp);
        }
        String where = String.join(",", hostPorts);
        Duration timeout;
        String prefix;
        double driftFactor;
        try {
            driftFactor = driftFactor(config);
            timeout = EtcdLockProvider.Builder.requireValidTimeout(
                    config.durationProperty("timeout", EtcdLockProvider.DEFAULT_TIMEOUT));
            prefix = EtcdLockProvider.Builder.requireValidPrefix(
                    config.property("keyPrefix").orElse(EtcdLockProvider.DEFAULT_KEY_PREFIX));
        } catch (IllegalArgumentException e) {
            throw new LockConfigurationException(e.getMessage(), e);
        }
        ClientBuilder builder = Client.builder()
                .endpoints(endpoints.toArray(String[]::new))
                .connectTimeout(timeout)
                .waitForReady(false)
                .retryDelay(50)
                .retryMaxDelay(500)
                .retryMaxDuration(timeout);
        if (user != null && password != null) {
            builder.user(ByteSequence.from(user, StandardCharsets.UTF_8))
                    .password(ByteSequence.from(password, StandardCharsets.UTF_8));
        }
        configureTls(config, tls, builder);
        Client client = builder.build();
        return EtcdLockProvider.builder(client)
                .keyPrefix(prefix)
                .timeout(timeout)
                .driftFactor(driftFactor)
                .runtime(config.runtime())
                .closeClient(true)
                .describedAs(where)
                .build();
    }

    private static void configureTls(LockConfig config, boolean tls, ClientBuilder builder) {
        Optional<String> trustStore = config.property("trustStore");
        Optional<String> authority = config.property("authority");
        if (!tls) {
            if (trustStore.isPresent() || authority.isPresent()) {
                throw new LockConfigurationException(
                        "trustStore and authority need an etcds:// URI, was " + LockConfig.redacted(config.uri()));
            }
            return;
        }
        authority.ifPresent(builder::authority);
        TrustManagerFactory trust = trustManagers(
                trustStore.orElse(null), config.property("trustStorePassword").orElse(""));
        try {
            builder.sslContext(ssl -> ssl.trustManager(trust));
        } catch (SSLException e) {
            throw new LockConfigurationException("TLS could not be set up for etcd: " + e.getMessage(), e);
        }
    }

    private static TrustManagerFactory trustManagers(String path, String password) {
        try {
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            if (path == null) {
                trust.init((KeyStore) null);
                return trust;
            }
            try (InputStream in = Files.newInputStream(Path.of(path))) {
                KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
                store.load(in, password.toCharArray());
                trust.init(store);
                return trust;
            }
        } catch (IOException | GeneralSecurityException e) {
            throw new LockConfigurationException("trustStore '" + path + "' could not be read: " + e.getMessage(), e);
        }
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    /** {@inheritDoc} */
    @Override
    public java.util.List<io.lockstep.spi.ProviderKind> kinds() {
        return java.util.List.of(new io.lockstep.spi.ProviderKind(
                "etcd", "etcd://h1:2379,h2:2379 (etcds:// for TLS)", io.lockstep.etcd.internal.EtcdBackend.INFO));
    }
}
