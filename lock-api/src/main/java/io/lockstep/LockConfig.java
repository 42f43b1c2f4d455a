package io.lockstep;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link io.lockstep.spi.LockProviderFactory} builds a provider from: the backend URI, its
 * settings (the URI's query parameters plus any added with {@link #withProperty}), and the
 * {@link LockRuntime}. Read-only and immutable. Query parameters are percent-decoded as RFC 3986 says
 * ({@code +} is a plus sign, not a space).
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
            // Never echo what failed to parse: the bad character may be in a password.
            throw new LockConfigurationException("uri is not a valid URI: " + e.getReason() + " at index "
                    + e.getIndex() + " (percent-encode special characters in the user name and password)");
        }
    }

    /** Uses {@code uri}; its query parameters become properties. */
    public static LockConfig of(URI uri) {
        Objects.requireNonNull(uri, "uri");
        if (uri.getScheme() == null) {
            throw new LockConfigurationException(
                    "uri has no scheme: '" + redacted(uri) + "'; expected for example redis://localhost:6379");
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
        return percentDecode(s, "a query parameter");
    }

    /**
     * Fails unless every property is one of {@code known} (or {@value Locks#PROVIDER_PROPERTY}), so a
     * misspelt setting is an error instead of a silently ignored one.
     *
     * @throws LockConfigurationException naming the unknown setting, a near miss if there is one, and
     *     the known settings
     */
    public void requireKnownSettings(Collection<String> known) {
        Set<String> all = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        all.addAll(known);
        all.add(Locks.PROVIDER_PROPERTY);
        for (String key : properties.keySet()) {
            if (known.contains(key) || key.equals(Locks.PROVIDER_PROPERTY)) {
                continue;
            }
            // The URI is not shown: a misspelt secret setting's value would be in its query.
            String hint = all.stream()
                    .filter(k -> nearMiss(k, key))
                    .findFirst()
                    .map(k -> "; did you mean '" + k + "'?")
                    .orElse("");
            throw new LockConfigurationException("unknown setting '" + key + "' for " + scheme() + "://" + hint
                    + "; known settings: " + String.join(", ", all));
        }
    }

    private static boolean nearMiss(String known, String given) {
        String a = known.toLowerCase(Locale.ROOT).replace("_", "").replace("-", "");
        String b = given.toLowerCase(Locale.ROOT).replace("_", "").replace("-", "");
        return a.equals(b) || editDistance(a, b) <= 2;
    }

    private static int editDistance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    /**
     * Percent-decodes {@code raw} as RFC 3986 says for every part of a URI: {@code %XX} is a byte of
     * UTF-8 and every other character, {@code +} included, stands for itself (HTML form decoding, which
     * turns {@code +} into a space, is not used).
     *
     * @param what what is decoded, for the message; the value itself is never shown (it may be a secret)
     * @throws LockConfigurationException for a {@code %} not followed by two hex digits
     */
    public static String percentDecode(String raw, String what) {
        if (raw.indexOf('%') < 0) {
            return raw;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); ) {
            char c = raw.charAt(i);
            if (c == '%') {
                int hi = i + 2 < raw.length() ? Character.digit(raw.charAt(i + 1), 16) : -1;
                int lo = hi < 0 ? -1 : Character.digit(raw.charAt(i + 2), 16);
                if (lo < 0) {
                    throw new LockConfigurationException(
                            what + " has a '%' at index " + i + " that is not followed by two hex digits");
                }
                bytes.write(hi * 16 + lo);
                i += 3;
            } else {
                int cp = raw.codePointAt(i);
                byte[] utf8 = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
                bytes.write(utf8, 0, utf8.length);
                i += Character.charCount(cp);
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "LockConfig[" + redacted(uri) + ", " + properties.keySet() + "]";
    }

    /** The URI without user info past the user name, nor query, for messages and logs; see {@link #redacted(String)}. */
    public static String redacted(@Nullable URI uri) {
        return uri == null ? "null" : redacted(uri.toString());
    }

    /**
     * {@code uri} as typed, with everything between {@code //} and the last {@code @} replaced by
     * {@code ***} (the user name before a {@code :} is kept) and the query replaced by {@code ?...},
     * for messages and logs. Works on the raw text, so it also covers the password-only form
     * {@code redis://secret@host}, authorities that {@link URI} reads as registry-based (several hosts,
     * {@code _} in a host name) and text that is not a valid URI at all. It errs on the side of hiding:
     * an {@code @} in the query hides the host.
     */
    public static String redacted(@Nullable String uri) {
        if (uri == null) {
            return "null";
        }
        int at = uri.lastIndexOf('@');
        if (at < 0) {
            return redactedQuery(uri);
        }
        int slashes = uri.indexOf("//");
        int colon = uri.indexOf(':');
        int start = slashes >= 0 && slashes < at ? slashes + 2 : colon >= 0 && colon < at ? colon + 1 : 0;
        String userInfo = uri.substring(start, at);
        int userEnd = userInfo.indexOf(':');
        String user = userEnd < 0 ? "" : userInfo.substring(0, userEnd);
        boolean plainUser = !user.isEmpty()
                && user.chars().allMatch(c -> Character.isLetterOrDigit(c) || "-._~%!$&'()*+,;=".indexOf(c) >= 0);
        return uri.substring(0, start) + (plainUser ? user + ":" : "") + "***" + redactedQuery(uri.substring(at));
    }

    /**
     * Drops the query and fragment, shown as {@code ?...}: a setting's value may be a secret, even under
     * a misspelt name, and messages name the setting they are about anyway.
     */
    private static String redactedQuery(String text) {
        int end = text.length();
        int question = text.indexOf('?');
        int hash = text.indexOf('#');
        if (question >= 0) {
            end = question;
        } else if (hash >= 0) {
            end = hash;
        }
        return end == text.length() ? text : text.substring(0, end) + "?...";
    }
}
