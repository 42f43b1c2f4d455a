package io.lockstep.redis.internal;

import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.BuilderFactory;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.CommandObject;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * The fast delivery of a grant to one waiter per provider: the oldest of its queued waiters (the one a
 * release of this process's locks most likely grants next) waits in {@code BLPOP} on its inbox ({@link
 * RedisKeys#inboxKey}), into which the granting release puts the fence, so the server's reply wakes the
 * waiting thread itself; that waiter says so at each refresh ({@link RedisWaiter#blocksOnInbox}), and a
 * grant to it is then not announced at all. Every other waiter, and this one when the lane is off, is
 * woken by the grant's notice, which the subscriber thread reads and passes on: one thread wake-up more
 * (measured on loopback: {@code BLPOP} 34-40 µs from the push to the woken thread, a notice and a
 * hand-over 64-69 µs; lock-redis's README).
 *
 * <p>One lane per provider, so one pooled connection at a time, whatever the number of waiters (the
 * subscription holds another); the lane passes to the next oldest waiter when its holder stops waiting,
 * and that waiter is woken to take it up. A {@code BLPOP} blocks at most its slice ({@link #DEFAULT_WAIT}
 * unless configured; keep it below the client's socket timeout: Jedis's default is 2 s), and is sent as
 * an ordinary command, so the client's socket timeout still bounds it when the server stalls. A server
 * that refuses it (an ACL user without {@code BLPOP}, a Redis before 6.0, which takes no fractional
 * timeout: {@link #refusedForGood}) turns the lane off for good; a connection failure, or a reply of a
 * passing state (a failover, a busy server, a moving slot), turns it off for {@link #SUSPENSION}. Either
 * way waiters fall back to notices.
 *
 * <p>Thread-safe.
 */
final class GrantLane {

    private static final Logger log = LoggerFactory.getLogger(GrantLane.class);

    /**
     * How long one {@code BLPOP} blocks unless configured ({@code inboxWait}); the waiter then looks at its
     * other wake-ups and blocks again.
     */
    static final Duration DEFAULT_WAIT =
            Duration.ofMillis(io.lockstep.redis.RedisLockProvider.DEFAULT_INBOX_WAIT_MILLIS);

    /** How long the lane stays off after a {@code BLPOP} failed on the connection. */
    static final Duration SUSPENSION = Duration.ofSeconds(30);

    private final UnifiedJedis jedis;
    private final String where;
    private final long sliceNanos;
    private final Consumer<RedisWaiter> wake;
    /** The open waiters, oldest first; the first holds the lane. Guarded by this. */
    private final LinkedHashSet<RedisWaiter> waiters = new LinkedHashSet<>();

    private volatile boolean refused;
    private volatile boolean suspended;
    private volatile long suspendedAt;
    private volatile boolean closed;

    /**
     * @param slice the longest one {@code BLPOP} blocks; zero turns the lane off
     * @param wake wakes a waiter's ordinary wait, so that the waiter the lane passed to takes it up
     */
    GrantLane(UnifiedJedis jedis, String where, Duration slice, Consumer<RedisWaiter> wake) {
        this.jedis = jedis;
        this.where = where;
        this.sliceNanos = slice.toNanos();
        this.wake = wake;
    }

    /** The longest one {@code BLPOP} blocks. */
    long sliceNanos() {
        return sliceNanos;
    }

    /** A waiter opened: it holds the lane once every older one has left. */
    synchronized void join(RedisWaiter waiter) {
        waiters.add(waiter);
    }

    /** A waiter closed: if it held the lane, the next oldest gets it and is woken to take it up. */
    void leave(RedisWaiter waiter) {
        RedisWaiter next = null;
        synchronized (this) {
            Iterator<RedisWaiter> oldest = waiters.iterator();
            boolean held = oldest.hasNext() && oldest.next() == waiter;
            waiters.remove(waiter);
            if (held && !waiters.isEmpty()) {
                next = waiters.iterator().next();
            }
        }
        if (next != null) {
            next.laneHandedOver();
            wake.accept(next);
        }
    }

    /** Whether {@code waiter} holds the lane and the lane is on. */
    boolean holds(RedisWaiter waiter) {
        if (sliceNanos <= 0 || closed || refused || (suspended && !suspensionOver())) {
            return false;
        }
        synchronized (this) {
            return !waiters.isEmpty() && waiters.iterator().next() == waiter;
        }
    }

    private boolean suspensionOver() {
        if (System.nanoTime() - suspendedAt - SUSPENSION.toNanos() < 0) {
            return false;
        }
        suspended = false;
        return true;
    }

    /**
     * Blocks up to {@code timeoutNanos} (at least 1 ms) for a fence in {@code inboxKey}; empty when none
     * came or the lane failed (and is then off: the caller waits for notices instead).
     */
    OptionalLong pop(String inboxKey, long timeoutNanos) {
        double seconds = Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)) / 1000.0;
        try {
            List<String> reply = jedis.executeCommand(new CommandObject<>(
                    new CommandArguments(Protocol.Command.BLPOP).key(inboxKey).add(seconds),
                    BuilderFactory.STRING_LIST));
            return reply == null || reply.size() < 2
                    ? OptionalLong.empty()
                    : OptionalLong.of(Long.parseLong(reply.get(1)));
        } catch (NumberFormatException e) {
            return OptionalLong.empty(); // not a grant of ours: the notice or a refresh tells
        } catch (JedisDataException e) {
            if (refusedForGood(e)) {
                refused = true;
                log.debug(
                        "Redis at {} refused BLPOP ({}); queued waiters take their grants from notices",
                        where,
                        e.getMessage());
            } else {
                suspend(e); // MOVED, TRYAGAIN, READONLY during a failover, BUSY, LOADING: for a while
            }
            return OptionalLong.empty();
        } catch (RuntimeException e) {
            if (!closed) {
                suspend(e);
            }
            return OptionalLong.empty();
        }
    }

    /**
     * Whether the server will never take this {@code BLPOP}: a user without permission for it ({@code
     * NOPERM}), or a server that does not know it (renamed away) or its fractional timeout (a Redis before
     * 6.0). Other replies tell of a passing state (a failover's {@code READONLY}, {@code BUSY}, {@code
     * LOADING}, a cluster's redirections, too many clients) and only suspend the lane.
     */
    static boolean refusedForGood(JedisDataException e) {
        String message = String.valueOf(e.getMessage());
        return e instanceof JedisAccessControlException
                || message.startsWith("NOPERM")
                || message.startsWith("ERR unknown command")
                || message.startsWith("ERR timeout is not");
    }

    private void suspend(RuntimeException failure) {
        suspendedAt = System.nanoTime();
        suspended = true;
        log.debug(
                "Waiting on a grant inbox at Redis at {} failed; queued waiters take their grants from notices"
                        + " for {}: {}",
                where,
                SUSPENSION,
                failure.toString());
    }

    /** The provider is closing: no waiter blocks on the lane any more. */
    void close() {
        closed = true;
    }
}
