package io.lockstep.redis.internal;

import io.lockstep.spi.ReleaseSignals;
import java.time.Duration;
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
 */
public final class RedisReleaseSignals extends ReleaseSignals {

    /** The longest pause between two attempts to subscribe while subscribing keeps failing. */
    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    /** The longest a new watch waits for a first subscription to succeed or fail. */
    private static final Duration FIRST_SUBSCRIPTION_WAIT = Duration.ofSeconds(2);

    /** Failed attempts in a row, other than permission errors, before the failure is logged as a warning. */
    private static final int FAILURES_BEFORE_WARNING = 3;

    private final UnifiedJedis jedis;
    private final String channel;
    private volatile @Nullable JedisPubSub subscription;

    /** Signals for releases announced on {@code channel}. */
    public RedisReleaseSignals(UnifiedJedis jedis, String channel, String where) {
        // close() does not wait for the thread: unsubscribing ends it, and a subscriber blocked on a dead
        // server must not hold close() up.
        super("lockstep-redis-releases", "Redis at " + where, MAX_BACKOFF, FIRST_SUBSCRIPTION_WAIT, Duration.ZERO);
        this.jedis = jedis;
        this.channel = channel;
    }

    @Override
    protected void listen() {
        JedisPubSub pubSub = new JedisPubSub() {
            @Override
            public void onSubscribe(String ch, int count) {
                listening();
            }

            @Override
            public void onMessage(String ch, String name) {
                signal(name);
            }
        };
        subscription = pubSub;
        if (!isClosed()) {
            jedis.subscribe(pubSub, channel);
        }
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
