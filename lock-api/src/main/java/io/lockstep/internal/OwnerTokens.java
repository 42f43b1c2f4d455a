package io.lockstep.internal;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Unguessable owner tokens: 128 bits from a {@link SecureRandom}, hex encoded.
 *
 * <p>The platform's default generator on Linux ({@code NativePRNG}) is one state for the whole JVM behind
 * one lock, and mixes every read with SHA-1: with callers on several threads, taking a token queued on
 * that lock (a profile of 8 threads acquiring on etcd: 2.5 % of the callers' CPU). Tokens come instead from
 * {@link #STRIPES} independent DRBG instances (NIST SP 800-90A, seeded by the platform), a caller's
 * stripe chosen by its thread, so callers rarely share one. A fixed number: no state per thread or lease.
 */
public final class OwnerTokens {

    /** How many generators callers are spread over. */
    static final int STRIPES = 8;

    private static final SecureRandom[] RANDOMS = randoms();
    private static final HexFormat HEX = HexFormat.of();

    private OwnerTokens() {}

    /** A fresh token of 32 hex digits. */
    public static String next() {
        byte[] bytes = new byte[16];
        SecureRandom random = RANDOMS[(int) (Thread.currentThread().getId() & (STRIPES - 1))];
        random.nextBytes(bytes); // synchronized per instance
        return HEX.formatHex(bytes);
    }

    private static SecureRandom[] randoms() {
        SecureRandom[] randoms = new SecureRandom[STRIPES];
        for (int i = 0; i < STRIPES; i++) {
            try {
                randoms[i] = SecureRandom.getInstance("DRBG");
            } catch (NoSuchAlgorithmException e) {
                randoms[i] = new SecureRandom(); // a platform without DRBG (the JDK has it since 9)
            }
        }
        return randoms;
    }
}
