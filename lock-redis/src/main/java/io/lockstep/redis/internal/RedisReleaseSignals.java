package io.lockstep.redis.internal;

import io.lockstep.spi.ReleaseSignals;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisAccessControlException;

/**
 * One pub/sub subscription per provider, started on the first wait, that wakes the waiters of a lock
 * when its release is announced; reconnecting, backing off and degrading to polling are {@link
 * ReleaseSignals}'.
 *
 * <p>A subscription that keeps failing (a Redis 7 ACL user without permission for the channel, a pool
 * with no free connection, an unreachable server) is logged once: at once for a permission error (with
 * the ACL rule to add), otherwise after {@link #FAILURES_BEFORE_WARNING} failures in a row; re-subscribing
 * backs off up to {@link #MAX_BACKOFF}.
 *
 * <p>Two kinds of notice share the channel: a lock name alone (released, nobody queued: wakes that
 * name's watches and queued waiters, who ask again), and {@code <name> US <sha1 of an owner token> US
 * <fence>} (US is the control character 31, which no lock name contains): a release granted the lock to
 * that queued waiter, which alone is woken and takes the grant without a round trip ({@link RedisWaiter}).
 * A client of an older version reads a grant notice as the name of a lock nobody waits for, and ignores it.
 */
public final class RedisReleaseSignals extends ReleaseSignals {

    /** The longest pause between two attempts to subscribe while subscribing keeps failing. */
    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    /** The longest a new watch waits for a first subscription to succeed or fail. */
    private static final Duration FIRST_SUBSCRIPTION_WAIT = Duration.ofSeconds(2);

    /** Failed attempts in a row, other than permission errors, before the failure is logged as a warning. */
    private static final int FAILURES_BEFORE_WARNING = 3;

    private final UnifiedJedis jedis;
    private final RedisKeys keys;
    private final String channel;
    private final GrantLane lane;
    private volatile @Nullable JedisPubSub subscription;
    /** Queued waiters by the hash of their owner token, and by lock name. */
    private final Map<String, RedisWaiter> waitersByHash = new ConcurrentHashMap<>();

    private final Map<String, Set<RedisWaiter>> waitersByName = new ConcurrentHashMap<>();

    /**
     * Signals for releases announced on {@code keys}' release channel, and the waiters' {@link GrantLane},
     * whose requests block up to {@code inboxWait} (zero: no lane).
     */
    public RedisReleaseSignals(UnifiedJedis jedis, RedisKeys keys, String where, Duration inboxWait) {
        // close() does not wait for the thread: unsubscribing ends it, and a subscriber blocked on a dead
        // server must not hold close() up.
        super("lockstep-redis-releases", "Redis at " + where, MAX_BACKOFF, FIRST_SUBSCRIPTION_WAIT, Duration.ZERO);
        this.jedis = jedis;
        this.keys = keys;
        this.channel = keys.releaseChannel();
        this.lane = new GrantLane(jedis, "Redis at " + where, inboxWait, RedisWaiter::wake);
    }

    @Override
    protected void listen() {
        JedisPubSub pubSub = new JedisPubSub() {
            @Override
            public void onSubscribe(String ch, int count) {
                listening();
            }

            @Override
            public void onMessage(String ch, String message) {
                notice(message);
            }
        };
        subscription = pubSub;
        if (!isClosed()) {
            jedis.subscribe(pubSub, channel);
        }
    }

    /** Routes one notice: a grant to its waiter, a plain release to the name's watches and queued waiters. */
    void notice(String message) {
        int first = message.indexOf(GRANT_SEPARATOR);
        if (first < 0) {
            signal(message);
            Set<RedisWaiter> queued = waitersByName.get(message);
            if (queued != null) {
                queued.forEach(RedisWaiter::wake);
            }
            return;
        }
        int second = message.indexOf(GRANT_SEPARATOR, first + 1);
        if (second < 0) {
            return;
        }
        RedisWaiter waiter = waitersByHash.get(message.substring(first + 1, second));
        if (waiter == null || !waiter.name().equals(message.substring(0, first))) {
            return; // a waiter of another process, or one that has left
        }
        try {
            waiter.noticed(Long.parseLong(message.substring(second + 1)));
        } catch (NumberFormatException e) {
            return;
        }
        waiter.wake();
    }

    /** Separates the fields of a grant notice: the control character US, which no lock name contains. */
    static final char GRANT_SEPARATOR = '\u001f';

    /**
     * Opens a queued waiter, woken by a notice of a grant to it alone (and by a plain release of its lock,
     * a new subscription or a dropped one), with a place in the line for the {@link GrantLane}, both kept
     * until it closes. Its wake-ups are its own, found by the hash a grant notice names it by; no {@link
     * #watch} per waiter.
     */
    RedisWaiter openWaiter(String name, String ownerToken, java.util.function.Consumer<RedisWaiter> onClose) {
        String hash = RedisWaiter.tokenHash(ownerToken);
        RedisWaiter waiter = new RedisWaiter(name, ownerToken, hash, lane, keys.inboxKey(name, hash), w -> {
            lane.leave(w);
            waitersByHash.remove(w.tokenHash(), w);
            waitersByName.computeIfPresent(w.name(), (n, set) -> {
                set.remove(w);
                return set.isEmpty() ? null : set;
            });
            onClose.accept(w);
        });
        waitersByHash.put(hash, waiter);
        waitersByName.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(waiter);
        lane.join(waiter);
        subscribe();
        return waiter;
    }

    @Override
    protected void wakeOwnWaiters() {
        waitersByHash.values().forEach(RedisWaiter::wake);
    }

    @Override
    public void close() {
        lane.close();
        super.close();
    }

    @Override
    protected void stopListening() {
        JedisPubSub pubSub = subscription;
        if (pubSub != null) {
            try {
                pubSub.unsubscribe();
            } catch (RuntimeException ignored) {
                // Not subscribed (yet or any more).
            }
        }
    }

    @Override
    protected boolean worthAWarning(RuntimeException failure, int failuresInARow) {
        return isPermissionError(failure) || failuresInARow >= FAILURES_BEFORE_WARNING;
    }

    @Override
    protected String warning(RuntimeException failure) {
        return isPermissionError(failure)
                ? "Release notifications on " + where + " are refused (" + failure.getMessage()
                        + "); waiters poll for free locks instead (at most every second). Give the user the channel:"
                        + " ACL SETUSER <user> &" + channel
                : "Release notifications on " + where + " keep failing (" + failure.getMessage()
                        + "); waiters poll for free locks instead (at most every second) until the subscription to "
                        + channel + " works again";
    }

    private static boolean isPermissionError(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof JedisAccessControlException
                    || String.valueOf(t.getMessage()).startsWith("NOPERM")) {
                return true;
            }
        }
        return false;
    }
}
