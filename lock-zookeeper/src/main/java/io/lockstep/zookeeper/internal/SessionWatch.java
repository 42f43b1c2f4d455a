package io.lockstep.zookeeper.internal;

import io.lockstep.LockRuntime;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.api.CuratorListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches one Curator client's connection and session, and tells its {@link Listener} about every
 * (re)connect together with the session id and the session timeout negotiated on that connect.
 *
 * <p>ZooKeeper negotiates the session timeout on <em>every</em> connect, also when a session resumes
 * on another server or on a restarted one: the server clamps the client's request to its own {@code
 * minSessionTimeout..maxSessionTimeout} and from then on expires the session by the new value. A lease
 * sized to the timeout granted at open can therefore outlive its session after a reconnect, so the
 * backend must hear of the new value before the server could expire the session by it.
 *
 * <p>How soon: Curator's {@link ConnectionStateListener}s run on one thread behind a queue, after every
 * listener registered before them (a caller's slow listener holds them up, and with them Curator's
 * "session timeout elapsed while SUSPENDED" injection). So the connect is taken from the raw ZooKeeper
 * event, delivered to {@link CuratorListener}s on the ZooKeeper client's event thread right after the
 * client read the server's answer (the timeout is set before the event is queued). A client with a
 * namespace cannot register those; it is polled every {@value #POLL_MILLIS} ms instead. Curator's state
 * listener calls the listener too; every call is idempotent, judged on the current session and timeout.
 *
 * <p>Thread-safe. The listener is called on ZooKeeper's event thread, Curator's state thread or the
 * runtime's scheduler, possibly concurrently, and must not block.
 */
final class SessionWatch implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SessionWatch.class);

    /** How often a client without raw events (a namespace facade) is looked at. */
    static final long POLL_MILLIS = 100;

    /** What the backend does on changes of the connection; each call is idempotent. */
    interface Listener {
        /** Connected (first time, again, or on a new session) with {@code sessionTimeoutMillis} negotiated. */
        void connected(long sessionId, long sessionTimeoutMillis);

        /** The connection is suspended: the session is in doubt. */
        void suspended();

        /** The session is gone (Curator's LOST or ZooKeeper's Expired). */
        void sessionEnded();
    }

    private final CuratorFramework client;
    private final Listener listener;
    private final ConnectionStateListener states = this::stateChanged;
    private final CuratorListener events = this::eventReceived;
    private final boolean rawEvents;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile long lastSeenTimeout = -1;
    private volatile @Nullable ScheduledFuture<?> poll;

    SessionWatch(CuratorFramework client, Listener listener, LockRuntime runtime) {
        this.client = Objects.requireNonNull(client, "client");
        this.listener = Objects.requireNonNull(listener, "listener");
        boolean raw;
        try {
            client.getCuratorListenable().addListener(events);
            raw = true;
        } catch (UnsupportedOperationException namespaced) {
            raw = false;
        }
        this.rawEvents = raw;
        if (client.getZookeeperClient().isConnected()) {
            lastSeenTimeout = sessionTimeoutMillis(); // what a later connect is compared with
        }
        client.getConnectionStateListenable().addListener(states);
        if (!raw) {
            try {
                poll = runtime.scheduler()
                        .scheduleWithFixedDelay(this::poll, POLL_MILLIS, POLL_MILLIS, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                log.debug("Lease scheduler is shut down; the session is watched through Curator's states only");
            }
        }
    }

    /**
     * The session timeout the server granted on the current (or last) connect; the requested one before
     * the first connect, {@link Long#MAX_VALUE} if not even that is known.
     */
    long sessionTimeoutMillis() {
        try {
            int negotiated = client.getZookeeperClient().getZooKeeper().getSessionTimeout();
            if (negotiated > 0) {
                return negotiated;
            }
        } catch (Exception e) {
            // not connected yet
        }
        int last = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        return last > 0 ? last : Long.MAX_VALUE;
    }

    /** The current session's id, 0 if there is none. */
    long sessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    private void eventReceived(CuratorFramework source, org.apache.curator.framework.api.CuratorEvent event) {
        if (event.getType() != CuratorEventType.WATCHED) {
            return;
        }
        WatchedEvent watched = event.getWatchedEvent();
        if (watched == null || watched.getType() != Watcher.Event.EventType.None) {
            return;
        }
        switch (watched.getState()) {
            case SyncConnected, ConnectedReadOnly -> connected();
            case Expired -> listener.sessionEnded();
            default -> {}
        }
    }

    private void stateChanged(CuratorFramework source, ConnectionState state) {
        switch (state) {
            case SUSPENDED -> listener.suspended();
            case LOST -> listener.sessionEnded();
            case CONNECTED, RECONNECTED, READ_ONLY -> connected();
            default -> {}
        }
    }

    /** Without raw events: a change of the negotiated timeout or of the session is a connect. */
    private void poll() {
        if (!client.getZookeeperClient().isConnected()) {
            return;
        }
        // Curator's state thread reports a new session; only the timeout is looked at here.
        if (client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs() != lastSeenTimeout) {
            connected();
        }
    }

    private void connected() {
        if (closed.get()) {
            return;
        }
        long session = sessionId();
        long timeout = sessionTimeoutMillis();
        if (lastSeenTimeout > 0 && timeout < lastSeenTimeout) {
            log.warn(
                    "ZooKeeper renegotiated the session timeout down from {} ms to {} ms on reconnect"
                            + " (a server with a lower maxSessionTimeout)",
                    lastSeenTimeout,
                    timeout);
        }
        lastSeenTimeout = timeout;
        listener.connected(session, timeout);
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        client.getConnectionStateListenable().removeListener(states);
        if (rawEvents) {
            client.getCuratorListenable().removeListener(events);
        }
        ScheduledFuture<?> p = poll;
        if (p != null) {
            p.cancel(false);
        }
    }
}
