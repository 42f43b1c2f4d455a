package io.lockstep.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The owner-token check passes tokens from SecureRandom and fails the predictable ones providers use. */
class OwnerTokenCheckTest {

    private static List<String> tokens(Supplier<String> next) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            out.add(next.get());
        }
        return out;
    }

    @Test
    void secureRandomTokensPass() {
        SecureRandom random = new SecureRandom();
        for (int run = 0; run < 20; run++) {
            OwnerTokenCheck.assertUnpredictable(tokens(() -> {
                byte[] bytes = new byte[16];
                random.nextBytes(bytes);
                return HexFormat.of().formatHex(bytes);
            }));
        }
    }

    @Test
    void countersAndFixedPrefixesFail() {
        long[] counter = {System.nanoTime()};
        assertThatThrownBy(
                        () -> OwnerTokenCheck.assertUnpredictable(tokens(() -> String.format("%032x", counter[0]++))))
                .isInstanceOf(AssertionError.class);
        SecureRandom random = new SecureRandom();
        String prefix = String.format("%016x", random.nextLong());
        assertThatThrownBy(() -> OwnerTokenCheck.assertUnpredictable(
                        tokens(() -> prefix + String.format("%016x", random.nextLong()))))
                .isInstanceOf(AssertionError.class);
    }

    @Test
    void javaUtilRandomTokensAreRecognisedBothWays() {
        Random random = new Random();
        String longs = String.format("%016x%016x", random.nextLong(), random.nextLong());
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        String fromBytes = HexFormat.of().formatHex(bytes);
        assertThat(OwnerTokenCheck.fromJavaUtilRandom(longs)).isTrue();
        assertThat(OwnerTokenCheck.fromJavaUtilRandom(fromBytes)).isTrue();
        assertThatThrownBy(() -> OwnerTokenCheck.assertUnpredictable(
                        tokens(() -> String.format("%016x%016x", random.nextLong(), random.nextLong()))))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("java.util.Random");
        byte[] secure = new byte[16];
        new SecureRandom().nextBytes(secure);
        assertThat(OwnerTokenCheck.fromJavaUtilRandom(HexFormat.of().formatHex(secure)))
                .isFalse();
    }
}
