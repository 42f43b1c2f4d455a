package io.lockstep.internal;

import java.security.SecureRandom;
import java.util.HexFormat;

/** Unguessable owner tokens: 128 bits from {@link SecureRandom}, hex encoded. */
public final class OwnerTokens {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final HexFormat HEX = HexFormat.of();

    private OwnerTokens() {}

    /** A fresh token of 32 hex digits. */
    public static String next() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HEX.formatHex(bytes);
    }
}
