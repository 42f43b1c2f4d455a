package io.lockstep.redis.internal;

import io.lockstep.LossReason;
import io.lockstep.spi.ReleaseWatch;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One waiter queued on the server for one lock ({@link RedisBackend#watch(String, String)}): its wake-ups,
 * and what it needs to take a grant that a release made on its behalf without a round trip of its own.
 *
 * <h2>When a grant announced by a notice may be used, and from when it is valid</h2>
 *
 * A waiter granted by someone else's release sent nothing at the time of the grant, so its validity
 * cannot be counted from a request of its own for the grant. It is counted from the send time of its
 * latest queue refresh whose reply said "still waiting": the server processed that refresh while the
 * entry was still queued, and the grant (which removes the entry) came after, so the grant's TTL, which
 * the server starts at the grant with the waiter's own lease time, ends after that send time plus the
 * lease time. The reply carries the fence counter {@code c} at that moment; a grant notice carries the
 * grant's fence {@code f}. Fences only grow, so {@code f > c} proves the grant came after that refresh
 * was processed; a notice with {@code f ≤ c} is of an older grant (since lost, or the waiter queued
 * again) and is ignored. Ignoring a notice is always safe: the next refresh finds the grant on the server
 * (the lock's value is the waiter's) and takes it with a validity counted from that refresh.
 *
 * <p>Pub/sub is at-most-once: a lost notice is recovered by that next refresh, at most a poll interval
 * later. A failover signal taken before the refresh that is the validity's base goes with the grant, so
 * a failover after that moment ends the lease.
 *
 * <p>Thread-safe: the acquiring thread refreshes and takes grants, the subscriber thread delivers notices.
 */
final class RedisWaiter implements ReleaseWatch {

    private static final Duration CENTURY = Duration.ofDays(36_525);
    private static final long CENTURY_NANOS = CENTURY.toNanos();

    private final String name;
    private final String ownerToken;
    private final String tokenHash;
    /** Wake-ups: a grant notice, a plain release of the lock, the lane passed on, the subscription's state. */
    private final Semaphore wakeups = new Semaphore(0);

    private final GrantLane lane;
    private final String inboxKey;
    private final Consumer<RedisWaiter> onClose;

    private boolean sawWaiting;
    private long waitingSentAt;
    private long waitingFence;
    private @Nullable CompletionStage<LossReason> waitingFailover;
    /** The highest fence announced for this waiter and not yet shown stale; 0: none. */
    private long noticedFence;

    private boolean granted;
    private boolean closed;
    /** The lane passed to this waiter while it waited for notices: it should block on its inbox now. */
    private boolean handedOver;

    /**
     * @param tokenHash {@link #tokenHash(String)} of {@code ownerToken}
     * @param inboxKey where a release that grants this waiter puts the fence ({@link RedisKeys#inboxKey})
     */
    RedisWaiter(
            String name,
            String ownerToken,
            String tokenHash,
            GrantLane lane,
            String inboxKey,
            Consumer<RedisWaiter> onClose) {
        this.name = name;
        this.ownerToken = ownerToken;
        this.tokenHash = tokenHash;
        this.lane = lane;
        this.inboxKey = inboxKey;
        this.onClose = onClose;
    }

    /** Wakes the waiter's {@link #await}, or its next one: wake-ups do not add up. */
    void wake() {
        if (wakeups.availablePermits() == 0) {
            wakeups.release();
        }
    }

    /** Waits up to {@code nanos} for a wake-up (zero: takes one that came); true if one came. */
    private boolean awaitWakeup(long nanos) throws InterruptedException {
        boolean woken = wakeups.tryAcquire(nanos, TimeUnit.NANOSECONDS);
        wakeups.drainPermits();
        return woken;
    }

    /** What a grant notice names the waiter by: the SHA-1 of its owner token, hex, as Redis's {@code sha1hex}. */
    static String tokenHash(String ownerToken) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(ownerToken.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by the Java platform", e);
        }
    }

    String name() {
        return name;
    }

    String ownerToken() {
        return ownerToken;
    }

    String tokenHash() {
        return tokenHash;
    }

    /**
     * A refresh sent at {@code sentAt} (after taking {@code failover}) was answered "still waiting" with
     * the fence counter at {@code fenceCounter}: the latest known moment that precedes any later grant.
     */
    synchronized void stillWaiting(long sentAt, long fenceCounter, @Nullable CompletionStage<LossReason> failover) {
        sawWaiting = true;
        waitingSentAt = sentAt;
        waitingFence = fenceCounter;
        waitingFailover = failover;
        if (noticedFence <= fenceCounter) {
            noticedFence = 0; // announced before this refresh: that grant is gone
        }
    }

    /** A notice said a release granted this waiter the lock with {@code fence} (subscriber thread). */
    synchronized void noticed(long fence) {
        if (fence > noticedFence) {
            noticedFence = fence;
        }
    }

    /** A grant that a notice announced and that is known to follow the latest "still waiting"; null if none. */
    synchronized @Nullable Noticed takeNoticed() {
        if (!sawWaiting || noticedFence <= waitingFence) {
            return null;
        }
        Noticed noticed = new Noticed(noticedFence, waitingSentAt, waitingFailover);
        noticedFence = 0;
        return noticed;
    }

    /** A grant announced by a notice: its fence, and the local time its validity is counted from. */
    record Noticed(long fence, long validFrom, @Nullable CompletionStage<LossReason> failover) {}

    /** The acquire took the lock under this waiter's token: closing the watch must not withdraw it. */
    synchronized void granted() {
        granted = true;
    }

    /** Whether this waiter's acquire took the lock. */
    synchronized boolean wasGranted() {
        return granted;
    }

    /** Whether a grant was announced (by a notice or the inbox) after the latest "still waiting". */
    private synchronized boolean hasNoticed() {
        return sawWaiting && noticedFence > waitingFence;
    }

    /**
     * Whether this waiter holds the provider's {@link GrantLane} (and the lane is on): it blocks on its
     * inbox when it waits next, so a grant to it needs no notice. Told to the server at each refresh.
     */
    boolean blocksOnInbox() {
        return lane.holds(this);
    }

    /** The lane passed to this waiter ({@link GrantLane#leave}); it is woken next. */
    synchronized void laneHandedOver() {
        handedOver = true;
    }

    private synchronized boolean takeHandOver() {
        boolean was = handedOver;
        handedOver = false;
        return was;
    }

    /**
     * Waits up to {@code timeout} for a grant or another reason to ask again. The holder of the provider's
     * {@link GrantLane} blocks on its inbox, in slices, between which it looks at its other wake-ups (a
     * plain release of its lock, a new subscription); every other waiter waits for them alone, and takes
     * up the lane when it is woken because the lane passed to it. A fence taken from the inbox counts as
     * a notice ({@link #noticed}): the same rule decides whether it may be used. When the lane fails
     * (refused, or suspended after a failed {@code BLPOP}) it returns at once, so that the next refresh
     * tells the server this waiter no longer blocks on its inbox and wants notices.
     */
    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        // A timeout beyond a century waits a century: the deadline must not overflow.
        long deadline =
                System.nanoTime() + Math.max(0, timeout.compareTo(CENTURY) > 0 ? CENTURY_NANOS : timeout.toNanos());
        while (true) {
            long left = deadline - System.nanoTime();
            if (left > 0 && lane.holds(this)) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                if (takeHandOver()) {
                    awaitWakeup(0); // the wake-up that told of the hand-over, if still there
                }
                OptionalLong fence = lane.pop(inboxKey, Math.min(left, lane.sliceNanos()));
                if (fence.isPresent()) {
                    noticed(fence.getAsLong());
                    return true;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                if (awaitWakeup(0)) {
                    return true;
                }
                if (!lane.holds(this)) {
                    // The lane failed: the server still takes this waiter for one on its inbox and would
                    // grant it without a notice. Ask again at once, which tells it otherwise.
                    return true;
                }
                continue;
            }
            boolean woken = awaitWakeup(Math.max(0, left));
            if (woken && takeHandOver() && !hasNoticed()) {
                continue; // woken to take up the lane, not by a notice
            }
            return woken;
        }
    }

    /**
     * Stops waiting: the wake-ups end, and a waiter that did not take the lock withdraws from the queue
     * on the server at once (releasing and handing on a grant that came meanwhile). Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        onClose.accept(this);
    }
}
