package io.lockstep.spi;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The authority of a backend URI, {@code [user[:password]@]host[:port][,host[:port]...]}, read from the
 * URI's raw text, so that authorities {@link URI} only reads as registry-based parse too: several hosts,
 * or a host name with {@code _} as Docker Compose service names have. User and password are
 * percent-decoded as RFC 3986 says ({@code +} is a plus sign); {@code secret@host}, without a colon, is
 * a password without a user name, as {@code redis-cli} reads it.
 *
 * <p>Immutable. {@link #toString()} never shows the password, and no message of this class shows user
 * info.
 */
public final class UriAuthority {

    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9_]([A-Za-z0-9._-]*[A-Za-z0-9_])?");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]+(%[A-Za-z0-9]+)?");

    /**
     * One host and port.
     *
     * @param host a host name, an IPv4 address or an IPv6 address (without brackets)
     * @param port 1 to 65535
     */
    public record HostPort(String host, int port) {
        /** {@code host:port}, with brackets around an IPv6 address. */
        @Override
        public String toString() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    private final @Nullable String user;
    private final @Nullable String password;
    private final List<HostPort> hosts;

    private UriAuthority(@Nullable String user, @Nullable String password, List<HostPort> hosts) {
        this.user = user;
        this.password = password;
        this.hosts = List.copyOf(hosts);
    }

    /**
     * Parses the authority of {@code config}'s URI.
     *
     * @param defaultPort the port of a host given without one
     * @param field what the hosts are called in messages, for example {@code host} or {@code nodes}
     * @throws LockConfigurationException if there is no host, a host is not {@code host[:port]}, or a
     *     host appears twice (case-insensitively); the message names {@code field} and the bad entry
     */
    public static UriAuthority parse(LockConfig config, int defaultPort, String field) {
        URI uri = config.uri();
        String where = LockConfig.redacted(uri);
        String authority = uri.getRawAuthority();
        String user = null;
        String password = null;
        int at = authority == null ? -1 : authority.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int colon = userInfo.indexOf(':');
            if (colon >= 0) {
                user = emptyToNull(LockConfig.percentDecode(userInfo.substring(0, colon), "the user name"));
                password = LockConfig.percentDecode(userInfo.substring(colon + 1), "the password");
            } else {
                password = LockConfig.percentDecode(userInfo, "the password");
            }
        }
        if (authority == null || authority.isBlank()) {
            throw new LockConfigurationException(
                    field + " must not be empty: expected " + config.scheme() + "://host:port, was " + where);
        }
        List<HostPort> hosts = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        String[] parts = authority.split(",", -1);
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i].strip();
            if (part.isEmpty()) {
                throw new LockConfigurationException(
                        field + " has an empty entry at position " + (i + 1) + " in '" + authority + "' of " + where);
            }
            HostPort host = parseHost(part, defaultPort, field, where);
            if (!seen.add(host.toString().toLowerCase(Locale.ROOT))) {
                throw new LockConfigurationException(
                        field + " must be distinct; '" + part + "' appears twice in " + where);
            }
            hosts.add(host);
        }
        return new UriAuthority(user, password, hosts);
    }

    /** The user name, if one was given before a colon. */
    public Optional<String> user() {
        return Optional.ofNullable(user);
    }

    /** The password, if one was given. Never log it. */
    public Optional<String> password() {
        return Optional.ofNullable(password);
    }

    /** The hosts, in the order given; at least one. */
    public List<HostPort> hosts() {
        return hosts;
    }

    @Override
    public String toString() {
        return "UriAuthority[user=" + (user == null ? "none" : user) + ", password="
                + (password == null ? "none" : "***") + ", hosts=" + hosts + "]";
    }

    private static HostPort parseHost(String part, int defaultPort, String field, String where) {
        String host;
        String port = null;
        if (part.startsWith("[")) {
            int close = part.indexOf(']');
            if (close < 0) {
                throw badHost(part, "an IPv6 address needs a closing ']'", field, where);
            }
            host = part.substring(1, close);
            if (!IPV6.matcher(host).matches()) {
                throw badHost(part, "not an IPv6 address", field, where);
            }
            String rest = part.substring(close + 1);
            if (!rest.isEmpty()) {
                if (!rest.startsWith(":")) {
                    throw badHost(part, "expected ':port' after the address", field, where);
                }
                port = rest.substring(1);
            }
        } else {
            int colon = part.lastIndexOf(':');
            host = colon < 0 ? part : part.substring(0, colon);
            port = colon < 0 ? null : part.substring(colon + 1);
            if (!HOST.matcher(host).matches()) {
                throw badHost(part, "not a host name or address", field, where);
            }
        }
        int number = defaultPort;
        if (port != null) {
            try {
                number = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                throw badHost(part, "port '" + port + "' is not a number", field, where);
            }
            if (number < 1 || number > 65535) {
                throw badHost(part, "port must be between 1 and 65535, was " + number, field, where);
            }
        }
        return new HostPort(host, number);
    }

    private static LockConfigurationException badHost(String part, String why, String field, String where) {
        return new LockConfigurationException(field + ": cannot parse '" + part + "': " + why + " in " + where);
    }

    private static @Nullable String emptyToNull(String s) {
        return s.isEmpty() ? null : s;
    }
}
