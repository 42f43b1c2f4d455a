package io.lockstep.etcd.internal;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Fences acquire transactions that arrive late. An acquire whose reply does not come in time is not
 * cancelled on etcd: it may sit in a stalled connection or a frozen member and be applied after its
 * attempt was given up (and its key deleted), re-creating the key on the provider's live session where
 * nobody tracks it. etcd has no way to reject such a request by its connection, so each acquire
 * transaction carries its own fence: it puts the queue key only while the owner token's
 * <em>tombstone</em> ({@link EtcdKeys#tombstone}) does not exist. A token whose acquire went unanswered
 * gets its tombstone in the same transaction that deletes its key (release, give-up, expiry), so the
 * late original transaction fails its compare and changes nothing.
 *
 * <p>Cost: on the common path (every acquire answered) nothing but one compare on a key that never
 * exists; no extra round trip, no extra key. A tombstone is bound to the session lease the unanswered
 * acquire used (the late transaction can only put its key on that lease: once the lease is gone the
 * late put fails anyway, and the tombstone goes with it), and is deleted {@link #KEEP_MINUTES} minutes
 * after it was written, or when the provider closes (which revokes its sessions). Thread-safe.
 */
final class LateAcquireFence {

    /**
     * How long a tombstone is kept: far beyond the ~40 s after which jetcd's gRPC keep-alive drops a
     * connection that stopped answering, so a request held in a stalled connection is either delivered
     * or dead by then. A member frozen (SIGSTOP) longer than this that then applies a held acquire can
     * still leave a key; it is deleted when its provider closes.
     */
    static final long KEEP_MINUTES = 10;

    private final EtcdKeys keys;
    /** Owner token → the session lease of its last acquire whose outcome is unknown. */
    private final Map<String, Long> unanswered = new ConcurrentHashMap<>();

    LateAcquireFence(EtcdKeys keys) {
        this.keys = keys;
    }

    /** The compare every acquire transaction carries: {@code ownerToken} on {@code name} was not given up. */
    Cmp notGivenUp(String name, String ownerToken) {
        return new Cmp(keys.tombstone(name, ownerToken), Cmp.Op.EQUAL, CmpTarget.createRevision(0));
    }

    /** An acquire of {@code ownerToken}, sent on {@code leaseId}, got no answer: it may still be applied. */
    void unanswered(String ownerToken, long leaseId) {
        unanswered.put(ownerToken, leaseId);
    }

    /** Whether {@code ownerToken} has an acquire that may still be applied and no tombstone yet. */
    boolean needsTombstone(String ownerToken) {
        return unanswered.containsKey(ownerToken);
    }

    /**
     * The put of {@code ownerToken}'s tombstone, to go into the transaction that deletes its key; null
     * when all its acquires were answered.
     */
    @Nullable
    Op tombstone(String name, String ownerToken) {
        Long lease = unanswered.get(ownerToken);
        if (lease == null) {
            return null;
        }
        return Op.put(
                keys.tombstone(name, ownerToken),
                ByteSequence.from("given up", StandardCharsets.UTF_8),
                PutOption.builder().withLeaseId(lease).build());
    }

    /**
     * The tombstone of {@code ownerToken} is on etcd, or its lease is gone (so no late acquire can put
     * a key on it): nothing more to fence.
     */
    void fenced(String ownerToken) {
        unanswered.remove(ownerToken);
    }
}
