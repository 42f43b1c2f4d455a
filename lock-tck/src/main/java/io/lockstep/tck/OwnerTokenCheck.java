package io.lockstep.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Checks that owner tokens look like what {@link io.lockstep.Lease#ownerToken()} promises: 128 random
 * bits, hex encoded. Random tokens pass with overwhelming probability (each bound below fails a
 * random sample with a chance below one in a million); counters, timestamps, a fixed prefix with a
 * counter, or tokens built from few random bits fail. Tokens drawn from {@link java.util.Random} (48
 * bits of state: two outputs give the rest away) fail too, for the two usual ways of drawing them:
 * two {@code nextLong()}s in hex, or {@code nextBytes}.
 */
final class OwnerTokenCheck {

    /** Hex digits two tokens may share at their start or end; random ones share more with p < 1e-6. */
    private static final int MAX_SHARED_DIGITS = 8;

    private OwnerTokenCheck() {}

    static void assertUnpredictable(List<String> tokens) {
        assertThat(tokens).as("owner tokens").hasSizeGreaterThanOrEqualTo(16).doesNotHaveDuplicates();
        for (String token : tokens) {
            assertThat(token).as("owner token (128 random bits, hex encoded)").matches("[0-9a-fA-F]{32,}");
        }
        List<String> lower =
                tokens.stream().map(t -> t.toLowerCase(Locale.ROOT)).toList();
        for (int i = 0; i < lower.size(); i++) {
            for (int j = i + 1; j < lower.size(); j++) {
                String a = lower.get(i);
                String b = lower.get(j);
                assertThat(sharedPrefix(a, b))
                        .as("hex digits shared at the start of %s and %s", a, b)
                        .isLessThanOrEqualTo(MAX_SHARED_DIGITS);
                assertThat(sharedPrefix(reverse(a), reverse(b)))
                        .as("hex digits shared at the end of %s and %s", a, b)
                        .isLessThanOrEqualTo(MAX_SHARED_DIGITS);
            }
        }
        // Every bit of the first 128 varies across the sample, and about half of all bits are set.
        long ones = 0;
        long bits = 0;
        Set<Integer> varying = new HashSet<>();
        for (int position = 0; position < 128; position++) {
            int digit = position / 4;
            int shift = 3 - position % 4;
            boolean seenZero = false;
            boolean seenOne = false;
            for (String token : lower) {
                boolean one = ((Character.digit(token.charAt(digit), 16) >> shift) & 1) == 1;
                seenOne |= one;
                seenZero |= !one;
                ones += one ? 1 : 0;
                bits++;
            }
            if (seenOne && seenZero) {
                varying.add(position);
            }
        }
        assertThat(varying)
                .as("bit positions of the first 128 bits that vary across %d tokens: %s", lower.size(), lower)
                .hasSize(128);
        double share = (double) ones / bits;
        assertThat(share)
                .as("share of bits set across %d tokens: %s", lower.size(), lower)
                .isBetween(0.4, 0.6);
        for (String token : lower) {
            assertThat(fromJavaUtilRandom(token))
                    .as(
                            "owner token %s continues a java.util.Random sequence: its second half follows from its first",
                            token)
                    .isFalse();
        }
    }

    private static final long MULTIPLIER = 0x5DEECE66DL;
    private static final long ADDEND = 0xBL;
    private static final long MASK = (1L << 48) - 1;

    /**
     * Whether the token's first 128 bits are two successive {@code nextLong()}s of one {@link
     * java.util.Random}, or four successive {@code nextInt()}s as {@code nextBytes} writes them: from the
     * first output the generator's state is found by trying its 2^16 hidden bits, and the rest must then
     * match. A random token matches with a chance of about 2^-48.
     */
    static boolean fromJavaUtilRandom(String token) {
        if (token.length() < 32) {
            return false;
        }
        long first = Long.parseUnsignedLong(token.substring(0, 16), 16);
        long second = Long.parseUnsignedLong(token.substring(16, 32), 16);
        if (continuesLongs(first, second)) {
            return true;
        }
        byte[] bytes = new byte[16];
        for (int i = 0; i < 16; i++) {
            bytes[i] = (byte) Integer.parseInt(token.substring(2 * i, 2 * i + 2), 16);
        }
        int[] ints = new int[4];
        for (int i = 0; i < 4; i++) {
            // nextBytes writes each nextInt() low byte first.
            ints[i] = (bytes[4 * i] & 0xff)
                    | (bytes[4 * i + 1] & 0xff) << 8
                    | (bytes[4 * i + 2] & 0xff) << 16
                    | (bytes[4 * i + 3] & 0xff) << 24;
        }
        return continuesInts(ints);
    }

    /** nextLong() is (next(32) << 32) + next(32), the second added as a signed int. */
    private static boolean continuesLongs(long first, long second) {
        int low = (int) first;
        int high = (int) ((first - low) >>> 32);
        for (long hidden = 0; hidden < (1 << 16); hidden++) {
            long seed = ((high & 0xffffffffL) << 16) | hidden;
            long next = step(seed);
            if ((int) (next >>> 16) != low) {
                continue;
            }
            long s3 = step(next);
            long s4 = step(s3);
            long predicted = ((long) (int) (s3 >>> 16) << 32) + (int) (s4 >>> 16);
            if (predicted == second) {
                return true;
            }
        }
        return false;
    }

    private static boolean continuesInts(int[] ints) {
        for (long hidden = 0; hidden < (1 << 16); hidden++) {
            long seed = ((ints[0] & 0xffffffffL) << 16) | hidden;
            boolean all = true;
            for (int i = 1; i < ints.length && all; i++) {
                seed = step(seed);
                all = (int) (seed >>> 16) == ints[i];
            }
            if (all) {
                return true;
            }
        }
        return false;
    }

    private static long step(long seed) {
        return (seed * MULTIPLIER + ADDEND) & MASK;
    }

    private static int sharedPrefix(String a, String b) {
        int n = Math.min(a.length(), b.length());
        int i = 0;
        while (i < n && a.charAt(i) == b.charAt(i)) {
            i++;
        }
        return i;
    }

    private static String reverse(String s) {
        return new StringBuilder(s).reverse().toString();
    }
}
