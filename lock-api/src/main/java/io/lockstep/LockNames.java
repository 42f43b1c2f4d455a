package io.lockstep;

import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * The rules for lock names, shared by every provider.
 *
 * <p>A name is 1 to {@value #MAX_UTF8_BYTES} bytes of UTF-8 without control characters or unpaired
 * surrogates. Every other character is allowed and is an ordinary character: providers pass names
 * only as keys, parameters or encoded path segments, never inside scripts, SQL or patterns, so
 * {@code "a"}, {@code "a/b"}, {@code "*"} and {@code "'; DROP TABLE"} are four different locks.
 *
 * <p>Names are compared as exact sequences of characters: no case folding, no Unicode normalization,
 * no trimming, no truncation, no hashing. {@code "Lock"} and {@code "lock"}, {@code "café"} in NFC and
 * in NFD, {@code "name"} and {@code "name "}, and two 256-byte names that differ only in their last
 * byte are different locks. The limit counts bytes of UTF-8, not characters.
 */
public final class LockNames {

    /** The longest name, in bytes of UTF-8. */
    public static final int MAX_UTF8_BYTES = 256;

    private LockNames() {}

    /**
     * Returns {@code name} if it is a valid lock name.
     *
     * @throws IllegalArgumentException naming the rule broken and the (escaped, shortened) name: "must
     *     not be null", "must not be empty", "must not contain control characters" with the character as
     *     {@code U+XXXX} and its index, "must be valid Unicode" (an unpaired surrogate), or "must be at most
     *     256 bytes of UTF-8" with the name's length in bytes
     */
    public static String requireValid(@Nullable String name) {
        if (name == null) {
            throw new IllegalArgumentException("lock name must not be null");
        }
        if (name.isEmpty()) {
            throw new IllegalArgumentException("lock name must not be empty");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isISOControl(c)) {
                throw new IllegalArgumentException(String.format(
                        "lock name must not contain control characters; U+%04X at index %d in %s",
                        (int) c, i, quote(name)));
            }
            if (Character.isHighSurrogate(c)
                            && (i + 1 == name.length() || !Character.isLowSurrogate(name.charAt(i + 1)))
                    || Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(name.charAt(i - 1)))) {
                throw new IllegalArgumentException(
                        "lock name must be valid Unicode; unpaired surrogate at index " + i + " in " + quote(name));
            }
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_UTF8_BYTES) {
            throw new IllegalArgumentException("lock name must be at most " + MAX_UTF8_BYTES + " bytes of UTF-8, was "
                    + bytes + " bytes: " + quote(name));
        }
        return name;
    }

    /** The name quoted for a message: control characters escaped, long names shortened. */
    static String quote(String name) {
        StringBuilder out = new StringBuilder("'");
        int limit = Math.min(name.length(), 64);
        for (int i = 0; i < limit; i++) {
            char c = name.charAt(i);
            if (Character.isISOControl(c) || Character.isSurrogate(c)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        if (limit < name.length()) {
            out.append("...(").append(name.length()).append(" chars)");
        }
        return out.append('\'').toString();
    }
}
