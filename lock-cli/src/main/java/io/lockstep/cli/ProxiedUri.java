package io.lockstep.cli;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.tck.faults.TcpProxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A backend URI rewritten so that every {@code host:port} of its authority goes through one of the kit's
 * {@link TcpProxy TcpProxies} on loopback: the client-side partition works against any backend, staging
 * included. The URI's user info, path and query are kept as they are.
 */
final class ProxiedUri implements AutoCloseable {

    private static final Pattern URI =
            Pattern.compile("((?:jdbc:)?[A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)", Pattern.DOTALL);
    private static final Map<String, Integer> DEFAULT_PORTS = Map.of(
            "redis",
            6379,
            "rediss",
            6379,
            "redlock",
            6379,
            "etcd",
            2379,
            "etcds",
            2379,
            "zookeeper",
            2181,
            "jdbc:postgresql",
            5432,
            "jdbc:mariadb",
            3306);

    private final String uri;
    private final List<TcpProxy> proxies;

    private ProxiedUri(String uri, List<TcpProxy> proxies) {
        this.uri = uri;
        this.proxies = List.copyOf(proxies);
    }

    /**
     * Starts one proxy per host of {@code target}.
     *
     * @throws LockConfigurationException if the URI has no host list lockctl can read (the message names
     *     the URI without its password)
     */
    static ProxiedUri start(String target) {
        Matcher m = URI.matcher(target.strip());
        if (!m.matches() || m.group(2).isEmpty()) {
            throw new LockConfigurationException(
                    "--uri '" + LockConfig.redacted(target) + "' is not scheme://host[:port][,host[:port]...]");
        }
        String scheme = m.group(1).toLowerCase(Locale.ROOT);
        String authority = m.group(2);
        int at = authority.lastIndexOf('@');
        String userInfo = at < 0 ? "" : authority.substring(0, at + 1);
        String hosts = authority.substring(at + 1);
        List<TcpProxy> proxies = new ArrayList<>();
        List<String> rewritten = new ArrayList<>();
        try {
            for (String hostPort : hosts.split(",")) {
                if (hostPort.startsWith("[")) {
                    throw new LockConfigurationException(
                            "--uri '" + LockConfig.redacted(target) + "': IPv6 hosts cannot be proxied yet");
                }
                int colon = hostPort.lastIndexOf(':');
                String host = colon < 0 ? hostPort : hostPort.substring(0, colon);
                int port;
                if (colon < 0) {
                    Integer p = DEFAULT_PORTS.get(scheme);
                    if (p == null) {
                        throw new LockConfigurationException("--uri '" + LockConfig.redacted(target)
                                + "': give a port for '" + host + "' (no default port for " + scheme + ")");
                    }
                    port = p;
                } else {
                    try {
                        port = Integer.parseInt(hostPort.substring(colon + 1));
                    } catch (NumberFormatException e) {
                        throw new LockConfigurationException(
                                "--uri '" + LockConfig.redacted(target) + "': port of '" + host + "' is not a number");
                    }
                }
                if (host.isEmpty() || port < 1 || port > 65535) {
                    throw new LockConfigurationException(
                            "--uri '" + LockConfig.redacted(target) + "': bad host or port '" + hostPort + "'");
                }
                TcpProxy proxy = TcpProxy.start(host, port);
                proxies.add(proxy);
                rewritten.add(proxy.host() + ":" + proxy.port());
            }
        } catch (RuntimeException e) {
            proxies.forEach(TcpProxy::close);
            throw e;
        }
        return new ProxiedUri(m.group(1) + "://" + userInfo + String.join(",", rewritten) + m.group(3), proxies);
    }

    /** The URI through the proxies. */
    String uri() {
        return uri;
    }

    /** Stalls every connection: nothing passes either way until {@link #heal()}. */
    void partition() {
        proxies.forEach(TcpProxy::stall);
    }

    /** Lets traffic through again. */
    void heal() {
        proxies.forEach(TcpProxy::heal);
    }

    @Override
    public void close() {
        proxies.forEach(TcpProxy::close);
    }
}
