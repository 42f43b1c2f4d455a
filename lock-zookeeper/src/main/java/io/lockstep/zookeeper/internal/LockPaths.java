package io.lockstep.zookeeper.internal;

import java.nio.charset.StandardCharsets;
import java.util.Comparator;

/**
 * Znode paths of locks. A lock name becomes one path segment by percent-encoding every byte of its
 * UTF-8 form except ASCII letters, digits, {@code -} and {@code _}: {@code a/b} is {@code a%2Fb} and
 * {@code a%2Fb} is {@code a%252Fb}, so distinct names never share a node, and no name can form
 * {@code .}, {@code ..} or a character ZooKeeper refuses in a path.
 */
public final class LockPaths {

    /** The digits ZooKeeper appends to a sequential node. */
    static final int SEQUENCE_DIGITS = 10;

    /** Orders lock nodes by the sequence number ZooKeeper appended, which is the queue order. */
    static final Comparator<String> BY_SEQUENCE = Comparator.comparing(LockPaths::sequence);

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private LockPaths() {}

    /** The path segment for lock {@code name}. */
    public static String encode(String name) {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(bytes.length + 8);
        for (byte b : bytes) {
            int c = b & 0xFF;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
                out.append((char) c);
            } else {
                out.append('%').append(HEX[c >> 4]).append(HEX[c & 0xF]);
            }
        }
        return out.toString();
    }

    /** The lock name a segment made by {@link #encode} stands for. */
    public static String decode(String segment) {
        byte[] out = new byte[segment.length()];
        int n = 0;
        for (int i = 0; i < segment.length(); i++) {
            char c = segment.charAt(i);
            if (c == '%' && i + 2 < segment.length()) {
                out[n++] = (byte) Integer.parseInt(segment.substring(i + 1, i + 3), 16);
                i += 2;
            } else {
                out[n++] = (byte) c;
            }
        }
        return new String(out, 0, n, StandardCharsets.UTF_8);
    }

    /** The prefix of the queue node of {@code ownerToken}; ZooKeeper appends the sequence number. */
    static String nodePrefix(String ownerToken) {
        return ownerToken + "-";
    }

    /** Whether child {@code node} (a name, not a path) belongs to {@code ownerToken}. */
    static boolean ownedBy(String node, String ownerToken) {
        return node.length() == ownerToken.length() + 1 + SEQUENCE_DIGITS && node.startsWith(nodePrefix(ownerToken));
    }

    /** The sequence number of child {@code node}; nodes that are not lock nodes sort last. */
    static long sequence(String node) {
        if (node.length() <= SEQUENCE_DIGITS) {
            return Long.MAX_VALUE;
        }
        try {
            return Long.parseLong(node.substring(node.length() - SEQUENCE_DIGITS));
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    /** The last segment of {@code path}. */
    static String leaf(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
