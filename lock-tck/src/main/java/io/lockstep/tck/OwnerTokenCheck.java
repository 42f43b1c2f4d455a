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
 * counter, or tokens built from few random bits fail.
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
