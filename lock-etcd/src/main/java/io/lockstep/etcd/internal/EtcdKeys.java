package io.lockstep.etcd.internal;

import io.etcd.jetcd.ByteSequence;
import java.nio.charset.StandardCharsets;

/**
 * The key layout: {@code <keyPrefix><encoded name>/<owner token>}. Names are percent-encoded byte by
 * byte, keeping only {@code A-Z a-z 0-9 - . _}, so an encoded name never contains {@code /} or a bare
 * {@code %}: {@code a}, {@code a/b} and {@code a%2Fb} become {@code a}, {@code a%2Fb} and {@code
 * a%252Fb}, and no lock's key range holds another lock's keys.
 */
public final class EtcdKeys {

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private final String keyPrefix;

    /** Keys under {@code keyPrefix} (already validated). */
    public EtcdKeys(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    /** The prefix every queue key of {@code name} starts with. */
    public ByteSequence lockPrefix(String name) {
        return bytes(keyPrefix + encode(name) + "/");
    }

    /** The queue key of {@code ownerToken} on {@code name}. */
    public ByteSequence key(String name, String ownerToken) {
        return bytes(keyPrefix + encode(name) + "/" + ownerToken);
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
