package io.lockstep.etcd.internal;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.lockstep.spi.ReleaseWatch;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One waiter's place in a lock's queue: it watches only the deletion of the key just before its own (no
 * thundering herd). A lost watch signals too, so the waiter looks again. Thread-safe.
 *
 * <p>The watch starts at the server's current revision, not at the revision the key was read at: etcd
 * serves a watch that starts in the past from its "unsynced" set, which its sync loop catches up only
 * every 100 ms, so a handoff waited up to 100 ms after the release whenever any write came between the
 * read and the watch (over 10 % of contended handoffs in lock-bench). A deletion in that gap is still
 * not missed: the watch's creation reports the revision it starts after, and when that is past the read,
 * the waiter reads the key once more and looks again if it is gone.
 *
 * <p>A key is the one watched only at the create revision it was read with: a provider reuses its keys
 * ({@link QueueSlots}), so a predecessor's key deleted in that gap may already be back, put by a later
 * attempt that queued behind this waiter. Its presence must not keep the waiter waiting.
 */
final class EtcdWaiter implements ReleaseWatch {

    private static final Logger log = LoggerFactory.getLogger(EtcdWaiter.class);

    private final Client client;
    private final String where;
    private final Consumer<EtcdWaiter> onClose;
    private final Semaphore signals = new Semaphore(0);
    private volatile boolean granted;
    private Watch.@Nullable Watcher watcher;
    private @Nullable ByteSequence watching;
    private long watchingCreated;

    /**
     * @param where the endpoints, for messages
     * @param onClose called once the watch is closed, to withdraw a waiter that was not granted
     */
    EtcdWaiter(Client client, String where, Consumer<EtcdWaiter> onClose) {
        this.client = client;
        this.where = where;
        this.onClose = onClose;
    }

    /**
     * Watches the deletion of {@code predecessor}, created at revision {@code created} and read at
     * revision {@code readAt}; the same key (and creation) is watched once.
     */
    synchronized void watch(ByteSequence predecessor, long created, long readAt) {
        if (predecessor.equals(watching) && created == watchingCreated && watcher != null) {
            return;
        }
        stopWatching();
        watching = predecessor;
        watchingCreated = created;
        watcher = client.getWatchClient()
                .watch(
                        predecessor,
                        WatchOption.builder()
                                .withNoPut(true)
                                .withCreateNotify(true)
                                .build(),
                        Watch.listener(
                                response -> {
                                    if (response.isCreatedNotify()
                                            && response.getHeader().getRevision() > readAt) {
                                        lookAgainIfGone(predecessor, created);
                                    }
                                    for (WatchEvent event : response.getEvents()) {
                                        if (event.getEventType() == WatchEvent.EventType.DELETE) {
                                            signal();
                                        }
                                    }
                                },
                                error -> signal(),
                                this::signal));
    }

    /**
     * Reads {@code predecessor} once more, off the caller's thread, and signals if it is gone or was put
     * again since (its create revision is no longer {@code created}), or if the read fails: the waiter
     * then looks for itself.
     */
    private void lookAgainIfGone(ByteSequence predecessor, long created) {
        client.getKVClient().get(predecessor, KEY_ONLY).whenComplete((reply, error) -> {
            if (error != null
                    || reply.getKvs().isEmpty()
                    || reply.getKvs().get(0).getCreateRevision() != created) {
                signal();
            }
        });
    }

    /** A read of the key and its revisions, not its value. */
    private static final GetOption KEY_ONLY =
            GetOption.builder().withKeysOnly(true).build();

    /** The lock was granted to this waiter: stop watching; closing it then withdraws nothing. */
    void granted() {
        granted = true;
        stopWatching();
    }

    boolean wasGranted() {
        return granted;
    }

    /** Wakes the waiter: look again at once. */
    void signal() {
        if (signals.availablePermits() == 0) {
            signals.release();
        }
    }

    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        boolean signalled = signals.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (signalled) {
            signals.drainPermits();
        }
        return signalled;
    }

    @Override
    public void close() {
        stopWatching();
        onClose.accept(this);
    }

    private synchronized void stopWatching() {
        Watch.Watcher w = watcher;
        watcher = null;
        watching = null;
        if (w != null) {
            try {
                w.close();
            } catch (RuntimeException e) {
                log.debug("Closing a watch on etcd at {} failed: {}", where, e.toString());
            }
        }
    }
}
