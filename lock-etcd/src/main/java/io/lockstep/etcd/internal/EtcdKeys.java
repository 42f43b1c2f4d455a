package io.lockstep.etcd.internal;

import io.etcd.jetcd.ByteSequence;
import java.nio.charset.StandardCharsets;

/**
 * The key layout: {@code <keyPrefix>#<encoded name>/<provider id>.<slot>} for queue keys ({@link
 * QueueSlots}: a provider reuses a lock's keys rather than writing a new one per acquire), and {@code
 * <keyPrefix>#<encoded name>#<owner token>} for tombstones ({@link LateAcquireFence}). Names are
 * percent-encoded byte by byte, keeping only {@code A-Z a-z 0-9 - . _}, so an encoded name never
 * contains {@code /}, {@code #} or a bare {@code %}: {@code a}, {@code a/b} and {@code a%2Fb} become
 * {@code a}, {@code a%2Fb} and {@code a%252Fb}, and no lock's key range holds another lock's keys.
 *
 * <p>The {@code #} before the name is what keeps nested key prefixes apart: a key prefix may not
 * contain {@code #} ({@link #requireValidPrefix}), so the keys under a longer prefix {@code app/x/}
 * continue after {@code app/} with a character other than {@code #} and never fall into the range
 * {@code app/#x/} of lock {@code x} under {@code app/}. A tombstone continues after the encoded name
 * with {@code #}, never {@code /}, so it is never read as a member of any lock's queue.
 */
public final class EtcdKeys {

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private final String keyPrefix;

    /** Keys under {@code keyPrefix} (already validated). */
    public EtcdKeys(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    /** What marks the start of a lock's part of a key; never in a key prefix or an encoded name. */
    static final char MARK = '#';

    /** The prefix every queue key of {@code name} starts with. */
    public ByteSequence lockPrefix(String name) {
        return bytes(keyPrefix + MARK + encode(name) + "/");
    }

    /**
     * Queue key number {@code slot} of {@code name} for the provider {@code providerId} (random, so no
     * two providers share a key; see {@link QueueSlots}).
     */
    public ByteSequence key(String name, String providerId, int slot) {
        return bytes(keyPrefix + MARK + encode(name) + "/" + providerId + "." + slot);
    }

    /** The tombstone of {@code ownerToken} on {@code name}: outside every lock's queue range. */
    public ByteSequence tombstone(String name, String ownerToken) {
        return bytes(keyPrefix + MARK + encode(name) + MARK + ownerToken);
    }

    /**
     * {@code prefix} if it is a valid key prefix: 1 to 128 characters, no control character, no
     * {@code #} (which separates the prefix from the lock name, see above).
     */
    public static String requireValidPrefix(String prefix) {
        if (prefix == null) {
            throw new IllegalArgumentException("keyPrefix must not be null");
        }
        if (prefix.isEmpty() || prefix.length() > 128) {
            throw new IllegalArgumentException(
                    "keyPrefix must be 1 to 128 characters, was " + prefix.length() + " characters");
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (Character.isISOControl(prefix.charAt(i))) {
                throw new IllegalArgumentException("keyPrefix must not contain control characters, was '"
                        + prefix.replaceAll("\\p{Cntrl}", "?") + "'");
            }
        }
        if (prefix.indexOf(MARK) >= 0) {
            throw new IllegalArgumentException("keyPrefix must not contain '" + MARK + "' (it separates the prefix"
                    + " from the lock name, so that no prefix's keys fall into another's locks), was '" + prefix
                    + "'");
        }
        return prefix;
    }

    /** {@code name} percent-encoded as described above. */
    public static String encode(String name) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(utf8.length + 8);
        for (byte b : utf8) {
            int c = b & 0xff;
            if ((c >= 'A' && c <= 'Z')
                    || (c >= 'a' && c <= 'z')
                    || (c >= '0' && c <= '9')
                    || c == '-'
                    || c == '.'
                    || c == '_') {
                out.append((char) c);
            } else {
                out.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        return out.toString();
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
