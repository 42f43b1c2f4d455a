package io.lockstep.redlock.internal;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.redlock.RedlockOptions;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;

/**
 * A parsed {@code redlock://[user:password@]h1:p1,h2:p2,...[/db]?settings} URI. A multi-host authority
 * is not a server-based authority to {@link URI}, so it is read raw ({@link URI#getRawAuthority()}).
 *
 * @param nodes the nodes, in order
 * @param clientConfig credentials, TLS, timeouts and database for every node
 * @param options the Redlock settings
 */
public record RedlockUri(List<HostAndPort> nodes, JedisClientConfig clientConfig, RedlockOptions options) {

    private static final Logger log = LoggerFactory.getLogger(RedlockUri.class);
    private static final int DEFAULT_PORT = 6379;
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]+(%[A-Za-z0-9]+)?");
    private static final Set<String> KNOWN = Set.of(
            "driftFactor",
            "keyPrefix",
            "nodeTimeout",
            "retryDelay",
            "maxLeaseTime",
            "persistent",
            "quorum",
            "maxInFlight",
            "connectTimeout",
            "socketTimeout",
            "ssl",
            "database",
            "clientName",
            "provider");

    /**
     * Parses {@code config}'s URI and settings.
     *
     * @throws LockConfigurationException naming the bad part and its value
     */
    public static RedlockUri parse(LockConfig config) {
        URI uri = config.uri();
        String where = LockConfig.redacted(uri);
        if (!"redlock".equals(config.scheme())) {
            throw new LockConfigurationException("scheme must be redlock, was '" + config.scheme() + "' in " + where);
        }
        String authority = uri.getRawAuthority();
        if (authority == null || authority.isBlank()) {
            throw new LockConfigurationException(
                    "nodes must not be empty: expected redlock://host1:port1,host2:port2,... but was " + where);
        }
        String user = null;
        String password = null;
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int colon = userInfo.indexOf(':');
            if (colon >= 0) {
                user = emptyToNull(decode(userInfo.substring(0, colon)));
                password = decode(userInfo.substring(colon + 1));
            } else {
                password = decode(userInfo); // redis://secret@host: a password for the default user
            }
        }
        List<HostAndPort> nodes = parseNodes(authority, where);
        for (String key : config.properties().keySet()) {
            if (!KNOWN.contains(key)) {
                log.warn("Unknown redlock setting '{}' in {} is ignored; known settings: {}", key, where, KNOWN);
            }
        }
        RedlockOptions options = options(config, where);
        DefaultJedisClientConfig.Builder client = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(millis(config, "connectTimeout", Duration.ofSeconds(1)))
                .socketTimeoutMillis(millis(config, "socketTimeout", Duration.ofSeconds(2)))
                .database(database(config, uri, where))
                .ssl(config.booleanProperty("ssl", false))
                .clientName(config.property("clientName").orElse("lockstep-redlock"));
        if (user != null) {
            client.user(user);
        }
        if (password != null) {
            client.password(password);
        }
        return new RedlockUri(List.copyOf(nodes), client.build(), options);
    }

    private static List<HostAndPort> parseNodes(String authority, String where) {
        List<HostAndPort> nodes = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        String[] parts = authority.split(",", -1);
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i].strip();
            if (part.isEmpty()) {
                throw new LockConfigurationException(
                        "nodes has an empty entry at position " + (i + 1) + " in '" + authority + "' of " + where);
            }
            HostAndPort node = parseNode(part, where);
            if (!seen.add(node.getHost().toLowerCase(Locale.ROOT) + ":" + node.getPort())) {
                throw new LockConfigurationException(
                        "nodes must be distinct; '" + part + "' appears twice in " + where);
            }
            nodes.add(node);
        }
        return nodes;
    }

    private static HostAndPort parseNode(String part, String where) {
        String host;
        String port = null;
        if (part.startsWith("[")) {
            int close = part.indexOf(']');
            if (close < 0) {
                throw badNode(part, "an IPv6 address needs a closing ']'", where);
            }
            host = part.substring(1, close);
            if (!IPV6.matcher(host).matches()) {
                throw badNode(part, "not an IPv6 address", where);
            }
            String rest = part.substring(close + 1);
            if (!rest.isEmpty()) {
                if (!rest.startsWith(":")) {
                    throw badNode(part, "expected ':port' after the address", where);
                }
                port = rest.substring(1);
            }
        } else {
            int colon = part.lastIndexOf(':');
            host = colon < 0 ? part : part.substring(0, colon);
            port = colon < 0 ? null : part.substring(colon + 1);
            if (!HOST.matcher(host).matches()) {
                throw badNode(part, "not a host name or address", where);
            }
        }
        int number = DEFAULT_PORT;
        if (port != null) {
            try {
                number = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                throw badNode(part, "port '" + port + "' is not a number", where);
            }
            if (number < 1 || number > 65535) {
                throw badNode(part, "port must be between 1 and 65535, was " + number, where);
            }
        }
        return new HostAndPort(host, number);
    }

    private static LockConfigurationException badNode(String part, String why, String where) {
        return new LockConfigurationException("nodes: cannot parse '" + part + "': " + why + " in " + where);
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
            if (config.property("nodeTimeout").isPresent()) {
                options = options.withNodeTimeout(config.durationProperty("nodeTimeout", Duration.ZERO));
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

    private static String decode(String raw) {
        return URLDecoder.decode(raw, StandardCharsets.UTF_8);
    }

    private static @Nullable String emptyToNull(String s) {
        return s.isEmpty() ? null : s;
    }
}
