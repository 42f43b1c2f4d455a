package io.lockstep.etcd.internal;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Which queue keys of each lock this provider uses: a lock's keys are numbered slots ({@link
 * EtcdKeys#key}), and each attempt claims the lowest free one under its owner token. A slot is given
 * back only once etcd confirmed that its key is gone, so a slot's key on etcd is only ever the key of
 * the attempt that claims it, and a lock that this provider takes one holder at a time uses one key,
 * again and again.
 *
 * <p>Why reuse: etcd keeps every deleted key in its index until the next compaction, and the range read
 * each acquire makes over its lock's queue walks them all. A new key per acquire made that read, and the
 * acquire, slower with every acquire since the last compaction (and etcd compacts only when configured
 * to); with slots a lock has as many keys as it ever had holders and waiters at once in one provider.
 *
 * <p>Cost: one map entry per lock with a claimed slot, holding the claiming owner tokens (already held
 * by the grants); with one claim, the token alone. Thread-safe.
 */
final class QueueSlots {

    /**
     * Lock name → its claims: the owner token of slot 0 alone (the common case: one holder at a time,
     * no array), or an array indexed by slot, null where free.
     */
    private final ConcurrentHashMap<String, Object> claims = new ConcurrentHashMap<>();

    /** Claims the lowest free slot of {@code name} for {@code ownerToken}, and returns its number. */
    int claim(String name, String ownerToken) {
        int[] claimed = new int[1];
        claims.compute(name, (n, current) -> {
            if (current == null) {
                return ownerToken;
            }
            String[] owners = current instanceof String only ? new String[] {only} : (String[]) current;
            for (int i = 0; i < owners.length; i++) {
                if (owners[i] == null) {
                    owners[i] = ownerToken;
                    claimed[0] = i;
                    return owners;
                }
            }
            String[] more = Arrays.copyOf(owners, owners.length + 1);
            more[owners.length] = ownerToken;
            claimed[0] = owners.length;
            return more;
        });
        return claimed[0];
    }

    /** Whether slot {@code slot} of {@code name} is still claimed by {@code ownerToken}. */
    boolean isClaimed(String name, int slot, String ownerToken) {
        boolean[] mine = new boolean[1];
        claims.computeIfPresent(name, (n, current) -> {
            mine[0] = ownerToken.equals(owner(current, slot));
            return current;
        });
        return mine[0];
    }

    /**
     * Gives slot {@code slot} of {@code name} back if {@code ownerToken} claims it; does nothing
     * otherwise (so a second confirmation of the same removal never frees another attempt's slot).
     */
    void free(String name, int slot, String ownerToken) {
        claims.computeIfPresent(name, (n, current) -> {
            if (!ownerToken.equals(owner(current, slot))) {
                return current;
            }
            if (current instanceof String) {
                return null;
            }
            String[] owners = (String[]) current;
            owners[slot] = null;
            for (int i = 1; i < owners.length; i++) {
                if (owners[i] != null) {
                    return owners;
                }
            }
            return owners[0]; // slot 0 alone, or nothing (null removes the entry)
        });
    }

    private static @Nullable String owner(Object claims, int slot) {
        if (claims instanceof String only) {
            return slot == 0 ? only : null;
        }
        String[] owners = (String[]) claims;
        return slot >= 0 && slot < owners.length ? owners[slot] : null;
    }

    /** How many locks have a claimed slot (for tests). */
    int locks() {
        return claims.size();
    }
}
