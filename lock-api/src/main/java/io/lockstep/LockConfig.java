package io.lockstep;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link io.lockstep.spi.LockProviderFactory} builds a provider from: the backend URI, its
 * settings (the URI's query parameters plus any added with {@link #withProperty}), and the
 * {@link LockRuntime}. Read-only and immutable.
 *
 * <p>Typed getters validate: a bad value throws {@link LockConfigurationException} naming the
 * setting and the value.
 */
public final class LockConfig {

    private static final Pattern DURATION = Pattern.compile("(\\d{1,12})(ms|s|m|h)");

    private final URI uri;
    private final Map<String, String> properties;
    private final LockRuntime runtime;

    private LockConfig(URI uri, Map<String, String> properties, LockRuntime runtime) {
        this.uri = uri;
        this.properties = Collections.unmodifiableMap(properties);
        this.runtime = runtime;
    }

    /**
     * Parses {@code uri}; its query parameters become properties.
     *
     * @throws LockConfigurationException if it is not a URI with a scheme
     */
    public static LockConfig of(String uri) {
        if (uri == null || uri.isBlank()) {
            throw new LockConfigurationException("uri must not be empty");
        }
        try {
            return of(new URI(uri.strip()));
        } catch (URISyntaxException e) {
            throw new LockConfigurationException("uri is not a valid URI: '" + uri + "': " + e.getMessage(), e);
        }
    }

    /** Uses {@code uri}; its query parameters become properties. */
    public static LockConfig of(URI uri) {
        Objects.requireNonNull(uri, "uri");
        if (uri.getScheme() == null) {
            throw new LockConfigurationException(
                    "uri has no scheme: '" + uri + "'; expected for example redis://localhost:6379");
        }
        return new LockConfig(uri, parseQuery(uri), LockRuntime.defaults());
    }

    /** The same configuration with one more (or a replaced) property. */
    public LockConfig withProperty(String key, String value) {
        Map<String, String> copy = new LinkedHashMap<>(properties);
        copy.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        return new LockConfig(uri, copy, runtime);
    }

    /** The same configuration with another runtime (clock, scheduler, metrics, retry). */
    public LockConfig withRuntime(LockRuntime runtime) {
        return new LockConfig(uri, properties, Objects.requireNonNull(runtime, "runtime"));
    }

    /** The backend URI as given, query included. */
    public URI uri() {
        return uri;
    }

    /** The URI scheme in lower case, for example {@code redis}. */
    public String scheme() {
        return uri.getScheme().toLowerCase(Locale.ROOT);
    }

    /** All properties, read-only. */
    public Map<String, String> properties() {
        return properties;
    }

    /** The runtime the provider must use. */
    public LockRuntime runtime() {
        return runtime;
    }

    /** A property, if set. */
    public Optional<String> property(String key) {
        return Optional.ofNullable(properties.get(key));
    }

    /**
     * A duration property such as {@code 500ms}, {@code 5s}, {@code 2m}, {@code 1h} or ISO-8601
     * {@code PT5S}, or {@code defaultValue} when absent.
     */
    public Duration durationProperty(String key, Duration defaultValue) {
        String raw = properties.get(key);
        if (raw == null) {
            return defaultValue;
        }
        Matcher m = DURATION.matcher(raw.strip());
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                default -> Duration.ofHours(n);
            };
        }
        try {
            return Duration.parse(raw.strip());
        } catch (DateTimeParseException e) {
            throw new LockConfigurationException(
                    key + " must be a duration such as 500ms, 5s or PT5S, was '" + raw + "'", e);
        }
    }

    /** An integer property within [{@code min}, {@code max}], or {@code defaultValue} when absent. */
    public int intProperty(String key, int defaultValue, int min, int max) {
        String raw = properties.get(key);
        if (raw == null) {
            return defaultValue;
        }
        try {
            int value = Integer.parseInt(raw.strip());
            if (value < min || value > max) {
                throw new LockConfigurationException(
                        key + " must be between " + min + " and " + max + ", was " + value);
            }
            return value;
        } catch (NumberFormatException e) {
            throw new LockConfigurationException(key + " must be an integer, was '" + raw + "'", e);
        }
    }

    /** A boolean property ({@code true} or {@code false}), or {@code defaultValue} when absent. */
    public boolean booleanProperty(String key, boolean defaultValue) {
        String raw = properties.get(key);
        if (raw == null) {
            return defaultValue;
        }
        return switch (raw.strip().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new LockConfigurationException(key + " must be true or false, was '" + raw + "'");
        };
    }

    private static Map<String, String> parseQuery(URI uri) {
        Map<String, String> out = new LinkedHashMap<>();
        String query = uri.getRawQuery();
        if (query == null || query.isEmpty()) {
            return out;
        }
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String key = decode(eq < 0 ? pair : pair.substring(0, eq));
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
            out.put(key, value);
        }
        return out;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "LockConfig[" + redacted(uri) + ", " + properties.keySet() + "]";
    }

    /** The URI with any password replaced by {@code ***}, for messages and logs. */
    public static String redacted(@Nullable URI uri) {
        if (uri == null) {
            return "null";
        }
        String raw = uri.toString();
        String userInfo = uri.getRawUserInfo();
        String authority = uri.getRawAuthority();
        if (userInfo == null && authority != null && authority.lastIndexOf('@') > 0) {
            // A registry-based authority (several hosts, zookeeper://u:p@h1:2181,h2:2181) has no parsed
            // user info, but its password must be hidden all the same.
            userInfo = authority.substring(0, authority.lastIndexOf('@'));
        }
        if (userInfo == null || !userInfo.contains(":")) {
            return raw;
        }
        String user = userInfo.substring(0, userInfo.indexOf(':'));
        return raw.replace(userInfo + "@", user + ":***@");
    }
}
