package io.lockstep.zookeeper.internal;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.ClockAssumption;
import io.lockstep.Holder;
import io.lockstep.LockRuntime;
import io.lockstep.LossReason;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.internal.BoundedLane;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.AttemptContext;
import io.lockstep.spi.Extension;
import io.lockstep.spi.Grant;
import io.lockstep.spi.HolderText;
import io.lockstep.spi.LockBackend;
import io.lockstep.spi.ReleaseWatch;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks as a FIFO queue of ephemeral sequential znodes under one container node per lock name; the
 * lowest node holds the lock and every waiter watches only the node just before its own.
 *
 * <p><b>Lease time.</b> ZooKeeper frees an ephemeral node only when its session ends, so the lease
 * time is kept by the clients: a node's data is its lease time, its holder rewrites it to renew
 * ({@code setData} on the version it wrote last), and the waiter right behind a node deletes it (on that
 * version only) once it has seen the same version for longer than the lease time plus a drift
 * allowance on its own monotonic clock. The waiter starts counting only after it read the version, which
 * is after the holder sent the write, so the waiter never deletes a node whose holder still counts it
 * valid. The holder's own client also deletes its node when the lease runs out, and the session's end
 * frees it when the holder's process dies. A lease time longer than the session timeout is refused: the
 * lease could otherwise outlive the session that holds the node.
 *
 * <p><b>Renewal</b> rewrites the node ({@code setData} on the version the holder wrote last); the
 * holder's expiry is counted from when that write was sent. Renewals due together go as one {@code
 * multi} of up to {@value BatchedRenewals#MAX_RENEWAL_BATCH} such writes ({@link #extendAll}): one request and one
 * transaction at the server for all of them, judged per node as {@link #extend} judges one.
 *
 * <p>Fencing token: the holder node's {@code czxid} (globally increasing), never its sequence suffix,
 * which restarts when an empty parent is reaped.
 *
 * <p>Thread-safe.
 */
public final class ZooKeeperBackend implements LockBackend<ZooKeeperBackend.Handle> {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperBackend.class);

    /** What the backend claims; checked by the compatibility kit. */
    public static final ProviderInfo INFO = new ProviderInfo(
            "zookeeper",
            StrengthTier.CONSENSUS,
            EnumSet.of(
                    Capability.FENCING,
                    Capability.LEASE_EXPIRY,
                    Capability.EXTEND,
                    Capability.NOTIFIED_WAIT,
                    Capability.FAIR),
            // A waiter removes a silent holder's node after the lease time plus 1% and 10 ms on its own clock.
            ClockAssumption.rateDrift(0.01));

    /** Clock-rate allowance an observer adds before it expires another client's node: 1% plus 10 ms. */
    static final double DRIFT = 0.01;

    static final long DRIFT_FLOOR_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    /** Parents remembered before the cache starts over: it only saves a round trip, it must not grow. */
    private static final int MAX_KNOWN_PARENTS = 10_000;

    /** How many times one tryLock re-reads the queue after removing an expired predecessor. */
    private static final int MAX_ROUNDS = 4;

    /** What {@link #observe} returns when the predecessor was already gone. */
    private static final long PREDECESSOR_GONE = -1;

    private final CuratorFramework client;
    private final boolean closeClient;
    private final String basePath;
    private final List<ACL> acl;
    private final LockRuntime runtime;
    private final String where;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final Set<Handle> live = ConcurrentHashMap.newKeySet();
    /** Lock parents this client saw exist; a miss tries the one-round-trip create of parent and node. */
    private final Set<String> knownParents = ConcurrentHashMap.newKeySet();
    /** Abandoned attempts whose nodes could not be looked for yet (not connected); retried on reconnect. */
    private final Set<Cleanup> pendingCleanups = ConcurrentHashMap.newKeySet();

    private final SessionWatch session;
    private final BatchedRenewals renewals;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Executor callbacks = ForkJoinPool.commonPool();
    /**
     * Where the queue searches for abandoned attempts' nodes run (a listing and deletes each, blocking up
     * to a round trip's timeout against a stalled server): one at a time on the renewal executor, so a
     * burst of them never takes more than one of its threads from renewals.
     */
    private final BoundedLane cleanups;

    /**
     * @param client a started client; closed with the backend only if {@code closeClient}
     * @param basePath the znode under which lock parents live, e.g. {@code /lockstep}
     * @param acl the ACL of every node this backend creates
     * @param where the ensemble's address for messages (never a password)
     */
    public ZooKeeperBackend(
            CuratorFramework client,
            boolean closeClient,
            String basePath,
            List<ACL> acl,
            LockRuntime runtime,
            String where) {
        this.client = Objects.requireNonNull(client, "client");
        this.closeClient = closeClient;
        this.basePath = Objects.requireNonNull(basePath, "basePath");
        this.acl = List.copyOf(acl);
        this.runtime = Objects.requireNonNull(runtime, "runtime");
        this.where = Objects.requireNonNull(where, "where");
        this.cleanups = new BoundedLane(runtime.renewalExecutor(), 1);
        this.session = new SessionWatch(client, new SessionEvents(), runtime);
        this.renewals = new BatchedRenewals(this, client, session, where);
    }

    /** A held lock: its node, its fence, the version its holder wrote last. */
    public static final class Handle {
        final String name;
        final String token;
        final String path;
        final long czxid;
        final long sessionId;
        final CompletableFuture<LossReason> loss = new CompletableFuture<>();
        volatile int version;
        volatile boolean released;
        volatile long deadline;
        /** The lease time its holder last wrote successfully: what the session must outlast. */
        volatile long leaseMillis;
        /** The holder as {@link HolderText} wrote it, rewritten with every lease time. */
        final String holder;

        volatile @Nullable ScheduledFuture<?> expiry;

        Handle(
                String name,
                String token,
                String path,
                long czxid,
                long sessionId,
                int version,
                long leaseMillis,
                String holder) {
            this.name = name;
            this.holder = holder;
            this.token = token;
            this.path = path;
            this.czxid = czxid;
            this.sessionId = sessionId;
            this.version = version;
            this.leaseMillis = leaseMillis;
        }

        /** The holder's node. */
        public String path() {
            return path;
        }

        @Override
        public String toString() {
            return "Handle[" + path + ", czxid=" + czxid + "]";
        }
    }

    /** One waiter's (or one attempt's) place in a queue, between its first attempt and its end. */
    private final class Entry implements Watcher {
        final String name;
        final String token;
        final String parent;
        final boolean waiting;

        @Nullable
        String node;

        long czxid;
        long sessionId;
        int version;
        long lastWriteSentAt;
        boolean createMaybeSent;
        // When the first create that may have taken effect was sent: a node found after a lost reply
        // counts its lease from here, since no observer can have seen it before.
        long createSentAt;
        boolean granted;
        // What this waiter watches: its predecessor, the version it saw, and since when.
        @Nullable
        String observed;

        int observedVersion = -1;
        long observedSince;
        /**
         * The queue's head, watched while this entry's node was right behind it; set before the watch.
         * Its deletion makes this node the head: nothing sorts before the head, nothing lay between
         * the two, and a new node sorts after both.
         */
        volatile @Nullable HeadWatch headWatch;
        /** The last node whose deletion a watch reported (the event thread writes it). */
        volatile @Nullable String deleted;
        // Guarded by wakeups, never by the entry's own monitor: the attempt holds that monitor while it
        // waits for replies that ZooKeeper's event thread delivers, and signal() runs on that thread.
        private final Object wakeups = new Object();
        private boolean signalled;

        Entry(String name, String token, boolean waiting) {
            this.name = name;
            this.token = token;
            this.parent = parentPath(name);
            this.waiting = waiting;
        }

        @Override
        public void process(org.apache.zookeeper.WatchedEvent event) {
            if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
                deleted = event.getPath(); // Curator's watcher strips its namespace: the path as we asked
            }
            signal();
        }

        /** Wakes the waiter; called on ZooKeeper's event thread, so it must never wait for the attempt. */
        void signal() {
            synchronized (wakeups) {
                signalled = true;
                wakeups.notifyAll();
            }
        }

        boolean await(long nanos) throws InterruptedException {
            long deadline = System.nanoTime() + nanos;
            synchronized (wakeups) {
                while (!signalled) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    TimeUnit.NANOSECONDS.timedWait(wakeups, left);
                }
                signalled = false;
                return true;
            }
        }
    }

    @Override
    public ProviderInfo info() {
        return INFO;
    }

    /**
     * The lowest node of the lock's queue is its holder: its {@code czxid} is the fence. Remaining time
     * is the lease time its data names less the time since the server last wrote it ({@code mtime}, the
     * server's wall clock, read against this machine's: an estimate that is only as good as the two
     * clocks agree). The node's name holds the owner token and is never part of the answer. A free lock
     * has no last fence on ZooKeeper. The connected server is first brought up to date with the leader
     * ({@link #syncWithLeader}), so the answer includes every acquire and release that ended before the
     * call, whichever client made it.
     */
    @Override
    public Optional<io.lockstep.LockState> inspect(String name) {
        String what = "inspecting lock '" + name + "'";
        requireConnected(what);
        String parent = parentPath(name);
        try {
            syncWithLeader(parent);
            for (String node : children(parent)) {
                Stat stat = new Stat();
                byte[] data;
                try {
                    data = client.getData().storingStatIn(stat).forPath(parent + "/" + node);
                } catch (KeeperException.NoNodeException gone) {
                    continue; // released between the listing and the read: the next one is the holder now
                }
                long leaseMillis = TimeUnit.NANOSECONDS.toMillis(leaseNanosOf(data));
                long sinceWrite = Math.max(0, System.currentTimeMillis() - stat.getMtime());
                Duration remaining = Duration.ofMillis(Math.max(0, leaseMillis - sinceWrite));
                return Optional.of(new io.lockstep.LockState(
                        true, OptionalLong.of(stat.getCzxid()), Optional.of(remaining), holderOf(data)));
            }
            return Optional.of(new io.lockstep.LockState(false, OptionalLong.empty(), Optional.empty()));
        } catch (Exception e) {
            throw ZooKeeperErrors.map(e, what, where);
        }
    }

    @Override
    public Attempt<Handle> tryLock(String name, String ownerToken, Duration leaseTime) {
        return tryLock(new AttemptContext(name, ownerToken, leaseTime));
    }

    /**
     * Queues the attempt's node with the data {@code <lease ms> <host> <pid>[ <label>]}: the holder rides in
     * the writes the lock makes anyway (create, renewal), never in the node's name or path.
     */
    @Override
    public Attempt<Handle> tryLock(AttemptContext context) {
        String name = context.name();
        String ownerToken = context.ownerToken();
        Duration leaseTime = context.leaseTime();
        String holder = HolderText.encode(context.holder());
        long started = now();
        long sessionTimeoutMs = requireConnected("acquiring lock '" + name + "'");
        requireLeaseWithinSession(leaseTime, sessionTimeoutMs);
        String key = key(name, ownerToken);
        Entry entry = entries.computeIfAbsent(key, k -> new Entry(name, ownerToken, false));
        try {
            Attempt<Handle> attempt = attempt(entry, leaseTime, holder, started);
            if (attempt.isGranted()) {
                entries.remove(key, entry);
            } else if (!entry.waiting) {
                // Nobody waits with this token: leave nothing queued. Deleted before returning, so the
                // next tryAcquire (of any client) never finds this attempt's node still in the queue.
                entries.remove(key, entry);
                deleteNow(entry.node);
            }
            return attempt;
        } catch (Exception e) {
            throw ZooKeeperErrors.map(e, "acquiring lock '" + name + "'", where);
        }
    }

    private Attempt<Handle> attempt(Entry entry, Duration leaseTime, String holder, long started) throws Exception {
        long leaseNanos = leaseTime.toNanos();
        byte[] data = leaseData(leaseTime, holder);
        @Nullable List<String> listed = null;
        synchronized (entry) {
            if (entry.node == null) {
                listed = locateOrCreate(entry, data);
            }
        }
        if (listed == null && headDeleted(entry, leaseNanos)) {
            // The watch told us the head is gone and we were right behind it: we are the head now,
            // without reading the queue again (one request fewer per handoff).
            return Attempt.granted(grant(entry, leaseTime, holder, data, started));
        }
        for (int round = 0; ; round++) {
            if (round > 2 * MAX_ROUNDS) {
                return Attempt.busy(Duration.ofMillis(1)); // the queue keeps changing under us: look again soon
            }
            // The queue as read right behind our create (same round trip), else read now.
            List<String> children = listed != null ? listed : children(entry.parent);
            listed = null;
            String mine = LockPaths.leaf(Objects.requireNonNull(entry.node));
            for (String child : children) {
                if (LockPaths.ownedBy(child, entry.token) && !child.equals(mine)) {
                    // A create retried inside the client after a lost reply left a twin: remove it, so
                    // this token never has two places in the queue (CURATOR-604).
                    deleteQuietly(entry.parent + "/" + child);
                }
            }
            int index = children.indexOf(mine);
            if (index < 0) {
                // Our node is gone (expired by the waiter behind us, or our session ended): queue again.
                synchronized (entry) {
                    entry.node = null;
                    entry.createMaybeSent = false;
                    listed = locateOrCreate(entry, data);
                }
                continue;
            }
            if (index == 0) {
                return Attempt.granted(grant(entry, leaseTime, holder, data, started));
            }
            if (!entry.waiting) {
                return Attempt.busy(leaseTime);
            }
            refreshIfDue(entry, leaseNanos, data);
            String predecessor = entry.parent + "/" + children.get(index - 1);
            // Before the watch is set, so its event cannot come first.
            entry.headWatch = index == 1 ? new HeadWatch(entry.node, predecessor) : null;
            long retryAfter = observe(entry, predecessor);
            if (retryAfter == PREDECESSOR_GONE && index == 1 && stillQueued(entry, leaseNanos)) {
                // The head was gone when the server read it for us: we are the head now, as when a
                // watch reports its deletion. This is the common case when the head's holder released
                // while our read was on its way (a short hold, or a slow network).
                return Attempt.granted(grant(entry, leaseTime, holder, data, started));
            }
            if (retryAfter > 0 || round >= MAX_ROUNDS) {
                long refreshIn = entry.lastWriteSentAt + leaseNanos / 3 - now();
                return Attempt.busy(
                        Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(retryAfter, refreshIn))));
            }
        }
    }

    /**
     * Finds this token's node after a create whose reply was lost, or creates it. Returns the queue
     * (sorted) when it was read in the same round trip as the create, else null.
     */
    private @Nullable List<String> locateOrCreate(Entry entry, byte[] data) throws Exception {
        if (entry.createMaybeSent) {
            for (String child : children(entry.parent)) {
                if (LockPaths.ownedBy(child, entry.token)) {
                    String path = entry.parent + "/" + child;
                    Stat stat = client.checkExists().forPath(path);
                    if (stat != null) {
                        // Our create took effect although its reply was lost: use that node, counting its
                        // lease from when the first create was sent (observers saw it no earlier).
                        adopt(entry, path, stat, entry.createSentAt);
                        return null;
                    }
                }
            }
        }
        String prefix = entry.parent + "/" + LockPaths.nodePrefix(entry.token);
        long sentAt = now();
        if (!entry.createMaybeSent) {
            entry.createMaybeSent = true;
            entry.createSentAt = sentAt;
        }
        // A second time with the parent's create when the server reaped the parent this client knew.
        for (int round = 0; round < 2; round++) {
            List<String> listed = createPipelined(entry, prefix, data, sentAt);
            if (entry.node != null) {
                return listed;
            }
        }
        // The base path is missing (or the parent was reaped between our two creates): create the node
        // and whatever parents it lacks.
        Stat stat = new Stat();
        String path;
        try {
            path = client.create()
                    .storingStatIn(stat)
                    .creatingParentContainersIfNeeded()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .withACL(acl, true)
                    .forPath(prefix, data);
        } finally {
            rememberParent(entry.parent);
        }
        adopt(entry, path, stat, sentAt);
        return null;
    }

    /**
     * One round trip: (the parent container, if this client has not seen it,) the node, and the queue,
     * sent back to back on the session, which the server applies in order, so the listing includes the
     * node. Leaves {@code entry.node} null if the node could not be created for want of a parent.
     */
    private @Nullable List<String> createPipelined(Entry entry, String prefix, byte[] data, long sentAt)
            throws Exception {
        // The raw handle, for its asynchronous calls and the create's stat. Curator's namespace (if the
        // caller's client has one) is prefixed here; a chroot is the handle's.
        ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
        String ns = namespacePrefix();
        CompletableFuture<KeeperException.Code> parentCreated = null;
        if (!knownParents.contains(entry.parent)) {
            CompletableFuture<KeeperException.Code> f = new CompletableFuture<>();
            zk.create(
                    ns + entry.parent,
                    new byte[0],
                    acl,
                    CreateMode.CONTAINER,
                    (rc, path, ctx, name, stat) -> f.complete(KeeperException.Code.get(rc)),
                    null);
            parentCreated = f;
        }
        CompletableFuture<Created> created = new CompletableFuture<>();
        zk.create(
                ns + prefix,
                data,
                acl,
                CreateMode.EPHEMERAL_SEQUENTIAL,
                (rc, path, ctx, name, stat) -> created.complete(new Created(KeeperException.Code.get(rc), name, stat)),
                null);
        CompletableFuture<@Nullable List<String>> children = new CompletableFuture<>();
        zk.getChildren(
                ns + entry.parent,
                false,
                (rc, path, ctx, names) -> children.complete(rc == KeeperException.Code.OK.intValue() ? names : null),
                null);
        // The client fails pending calls when it gives a connection up (after two thirds of the session
        // timeout without a reply); this bound only guards against a reply that never comes at all.
        long bound = sessionTimeoutMillis() + client.getZookeeperClient().getConnectionTimeoutMs();
        Created reply = reply(created, bound);
        if (parentCreated != null) {
            KeeperException.Code code = reply(parentCreated, bound);
            if (code == KeeperException.Code.OK || code == KeeperException.Code.NODEEXISTS) {
                rememberParent(entry.parent);
            }
        }
        List<String> names = reply(children, bound);
        if (reply.code == KeeperException.Code.NONODE) {
            knownParents.remove(entry.parent);
            return null;
        }
        if (reply.code != KeeperException.Code.OK || reply.stat == null || reply.name == null) {
            throw KeeperException.create(reply.code, prefix);
        }
        rememberParent(entry.parent);
        adopt(entry, entry.parent + "/" + LockPaths.leaf(reply.name), reply.stat, sentAt);
        if (names == null) {
            return null;
        }
        List<String> sorted = new ArrayList<>(names);
        sorted.sort(LockPaths.BY_SEQUENCE);
        return sorted;
    }

    static <T> T reply(CompletableFuture<T> call, long boundMillis) throws Exception {
        try {
            return call.get(boundMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new KeeperException.ConnectionLossException();
        }
    }

    /** The reply to an asynchronous create. */
    private record Created(KeeperException.Code code, @Nullable String name, @Nullable Stat stat) {}

    private void rememberParent(String parent) {
        if (knownParents.size() >= MAX_KNOWN_PARENTS) {
            knownParents.clear();
        }
        knownParents.add(parent);
    }

    /**
     * Whether a watch reported the deletion of the head this entry's node was right behind, so the node
     * is the head now and the queue need not be read again. Only while the node is surely still there:
     * its own last write was sent less than a third of the lease ago (so the grant writes nothing), and
     * the waiter behind deletes a node only after seeing it unchanged for longer than the whole lease;
     * and the deletion came as a watch event, so the session was alive after the head was gone. A
     * session that ended since is caught by the grant, as after a listing.
     */
    private boolean headDeleted(Entry entry, long leaseNanos) {
        HeadWatch watched = entry.headWatch;
        return watched != null
                && watched.node().equals(entry.node)
                && watched.head().equals(entry.deleted)
                && stillQueued(entry, leaseNanos);
    }

    /**
     * Whether this entry's node is surely still in the queue without reading it: its last write was
     * sent less than a third of the lease ago, so the grant writes nothing and the waiter behind (which
     * deletes a node only after seeing it unchanged for longer than the whole lease) has not removed it.
     */
    private boolean stillQueued(Entry entry, long leaseNanos) {
        return now() - entry.lastWriteSentAt <= leaseNanos / 3;
    }

    /** A waiter's node and the head right before it, which the waiter watches. */
    private record HeadWatch(String node, String head) {}

    private static void adopt(Entry entry, String path, Stat stat, long writeSentAt) {
        entry.headWatch = null;
        entry.node = path;
        entry.czxid = stat.getCzxid();
        entry.sessionId = stat.getEphemeralOwner();
        entry.version = stat.getVersion();
        entry.lastWriteSentAt = writeSentAt;
    }

    private Grant<Handle> grant(Entry entry, Duration leaseTime, String holder, byte[] data, long started)
            throws Exception {
        long leaseNanos = leaseTime.toNanos();
        String node = Objects.requireNonNull(entry.node);
        // Observers count our lease from our last write; refresh it if waiting used up a third of it,
        // or if the node still carries another lease time.
        if (now() - entry.lastWriteSentAt > leaseNanos / 3) {
            writeLease(entry, data);
        }
        long validity = Math.min(leaseNanos, entry.lastWriteSentAt + leaseNanos - started);
        boolean sessionEnded = client.getZookeeperClient().getZooKeeper().getSessionId() != entry.sessionId;
        entry.granted = true;
        Handle handle = new Handle(
                entry.name,
                entry.token,
                node,
                entry.czxid,
                entry.sessionId,
                entry.version,
                leaseTime.toMillis(),
                holder);
        live.add(handle);
        scheduleExpiry(handle, entry.lastWriteSentAt + leaseNanos);
        if (sessionEnded) {
            // The session that made the node has already ended: the grant is lost from the start.
            markLost(handle, LossReason.SESSION_EXPIRED);
        } else {
            // A reconnect may have renegotiated the timeout while we queued; read after live.add, so
            // either this sees the new timeout or the connect's sweep sees this handle.
            endIfSessionTooShort(handle, session.sessionTimeoutMillis());
        }
        return new Grant<>(handle, OptionalLong.of(entry.czxid), Duration.ofNanos(Math.max(0, validity)), handle.loss);
    }

    /** Rewrites a waiting node's lease so the waiter behind does not expire it. */
    private void refreshIfDue(Entry entry, long leaseNanos, byte[] data) throws Exception {
        if (now() - entry.lastWriteSentAt > leaseNanos / 3) {
            writeLease(entry, data);
        }
    }

    private void writeLease(Entry entry, byte[] data) throws Exception {
        long sentAt = now();
        Stat stat = client.setData().withVersion(entry.version).forPath(Objects.requireNonNull(entry.node), data);
        entry.version = stat.getVersion();
        entry.lastWriteSentAt = sentAt;
    }

    /**
     * Reads the predecessor (and watches it); deletes it if its version did not change for longer than
     * its lease. Returns how long until it may be expired, 0 to look at the queue again now, or {@link
     * #PREDECESSOR_GONE} when the server found no such node (a reply on the live session, so the node
     * was gone while the session was alive).
     */
    private long observe(Entry entry, String predecessor) throws Exception {
        Stat stat = new Stat();
        byte[] data;
        try {
            data = client.getData().storingStatIn(stat).usingWatcher(entry).forPath(predecessor);
        } catch (KeeperException.NoNodeException gone) {
            return PREDECESSOR_GONE;
        }
        long seenAt = now(); // after the reply: later than the predecessor's write was sent
        if (!predecessor.equals(entry.observed) || stat.getVersion() != entry.observedVersion) {
            entry.observed = predecessor;
            entry.observedVersion = stat.getVersion();
            entry.observedSince = seenAt;
        }
        long lease = leaseNanosOf(data);
        long expiresAt = entry.observedSince + lease + Math.max(DRIFT_FLOOR_NANOS, (long) (lease * DRIFT));
        long left = expiresAt - now();
        if (left > 0) {
            return left;
        }
        try {
            client.delete().withVersion(entry.observedVersion).forPath(predecessor);
            log.info(
                    "Removed the node of a holder of lock '{}' that did not renew within its lease: {}",
                    entry.name,
                    predecessor);
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException renewedOrGone) {
            // It was renewed or released meanwhile: look again.
        }
        return 0;
    }

    private long leaseNanosOf(byte[] data) {
        try {
            String text = new String(data, StandardCharsets.US_ASCII).strip();
            int space = text.indexOf(' ');
            long millis = Long.parseLong(space < 0 ? text : text.substring(0, space));
            if (millis > 0) {
                return TimeUnit.MILLISECONDS.toNanos(millis);
            }
        } catch (NumberFormatException e) {
            // Not one of ours: count it as a session-long lease.
        }
        return TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMillis());
    }

    @Override
    public Optional<Duration> extend(Handle handle, Duration leaseTime) {
        long sessionTimeoutMs = sessionTimeoutMillis();
        requireLeaseWithinSession(leaseTime, sessionTimeoutMs);
        if (handle.loss.isDone() || handle.released) {
            return Optional.empty();
        }
        if (!client.getZookeeperClient().isConnected()) {
            // SUSPENDED: do not wait for a reconnect; the lease ends by its deadline unless one comes.
            throw new BackendUnavailableException(
                    "ZooKeeper at " + where + " is not connected (the session is in doubt); lock '" + handle.name
                            + "' cannot be renewed now",
                    null,
                    true);
        }
        byte[] data = leaseData(leaseTime, handle.holder);
        try {
            for (int attempt = 0; attempt < 2; attempt++) {
                long sentAt = now();
                try {
                    Stat stat = client.setData().withVersion(handle.version).forPath(handle.path, data);
                    handle.version = stat.getVersion();
                    handle.leaseMillis = leaseTime.toMillis();
                    scheduleExpiry(handle, sentAt + leaseTime.toNanos());
                    // The write may have gone out on a connection that renegotiated the timeout after
                    // the check above: judged again now that it is applied.
                    return endIfSessionTooShort(handle, session.sessionTimeoutMillis())
                            ? Optional.empty()
                            : Optional.of(leaseTime);
                } catch (KeeperException.BadVersionException e) {
                    // A renewal whose reply was lost may have been applied: adopt the version if the node
                    // is still ours and write again, so the lease counts from a write sent now.
                    Stat stat = client.checkExists().forPath(handle.path);
                    if (stat == null || stat.getCzxid() != handle.czxid) {
                        markLost(handle, LossReason.NOT_HELD);
                        return Optional.empty();
                    }
                    handle.version = stat.getVersion();
                }
            }
            return Optional.empty();
        } catch (KeeperException.NoNodeException e) {
            markLost(handle, LossReason.NOT_HELD);
            return Optional.empty();
        } catch (Exception e) {
            throw ZooKeeperErrors.map(e, "renewing lock '" + handle.name + "'", where);
        }
    }

    /** Up to {@value BatchedRenewals#MAX_RENEWAL_BATCH} renewals per {@link #extendAll}, one {@code multi} for them. */
    @Override
    public int maxRenewalBatch() {
        return BatchedRenewals.MAX_RENEWAL_BATCH;
    }

    /**
     * Renews many grants with one {@code multi} (see {@link BatchedRenewals#extendAll}), each judged as
     * {@link #extend} judges one. Thread-safe.
     */
    @Override
    public List<Optional<Duration>> extendAll(List<Extension<Handle>> extensions) {
        return renewals.extendAll(extensions);
    }

    /** Curator's namespace as a path prefix for calls on the raw handle ({@code ""} without one). */
    String namespacePrefix() {
        String ns = client.getNamespace();
        return ns == null || ns.isEmpty() ? "" : "/" + ns;
    }

    /**
     * Deletes the holder's node, waiting at most the client's connection timeout. When the client is not
     * connected (the session in doubt), or the delete's answer does not come within that bound, the node
     * is handed to Curator's guaranteed background delete (retried once connected again, for as long as
     * the session lives; if it ends the server removes the node) and this throws a non-transient {@link
     * BackendUnavailableException} at once, so the caller is never held for the session's fate and the
     * runtime does not retry what the background delete is doing.
     */
    @Override
    public boolean release(Handle handle) {
        boolean wasHeld = !handle.loss.isDone() && !handle.released && handle.deadline - now() > 0;
        handle.released = true;
        cancelExpiry(handle);
        live.remove(handle);
        String what = "releasing lock '" + handle.name + "'";
        long bound = client.getZookeeperClient().getConnectionTimeoutMs();
        if (!client.getZookeeperClient().isConnected()) {
            deleteQuietly(handle.path);
            throw releasedInBackground(what, "is not connected (the session is in doubt)", null);
        }
        try {
            // By path: the node's name carries this holder's owner token, so no one else's node has it.
            CompletableFuture<KeeperException.Code> deleted = new CompletableFuture<>();
            client.getZookeeperClient()
                    .getZooKeeper()
                    .delete(
                            namespacePrefix() + handle.path,
                            -1,
                            (rc, path, ctx) -> deleted.complete(KeeperException.Code.get(rc)),
                            null);
            KeeperException.Code code = reply(deleted, bound);
            if (code == KeeperException.Code.NONODE) {
                return false;
            }
            if (code != KeeperException.Code.OK) {
                throw KeeperException.create(code, handle.path);
            }
            return wasHeld;
        } catch (KeeperException.ConnectionLossException
                | KeeperException.SessionMovedException
                | KeeperException.OperationTimeoutException e) {
            deleteQuietly(handle.path);
            throw releasedInBackground(
                    what, "did not confirm the delete within connectionTimeout (" + bound + " ms)", e);
        } catch (Exception e) {
            // Free it once the connection is back (if the session survives; else it is gone already).
            deleteQuietly(handle.path);
            RuntimeException mapped = ZooKeeperErrors.map(e, what, where);
            if (mapped instanceof BackendUnavailableException) {
                throw new BackendUnavailableException(mapped.getMessage(), e, false); // not retried: see above
            }
            throw mapped;
        }
    }

    private BackendUnavailableException releasedInBackground(String what, String why, @Nullable Exception cause) {
        return new BackendUnavailableException(
                "ZooKeeper at " + where + " " + why + " while " + what + "; the node is deleted in the background"
                        + " once the connection is back, or removed by the server when the session ends",
                cause,
                false);
    }

    @Override
    public void abandon(String name, String ownerToken) {
        for (Handle handle : List.copyOf(live)) {
            if (handle.token.equals(ownerToken) && handle.name.equals(name)) {
                // A renewal that landed after its lease was given up: free the node it kept alive.
                live.remove(handle);
                cancelExpiry(handle);
                deleteQuietly(handle.path);
            }
        }
        Entry entry = entries.remove(key(name, ownerToken));
        if (entry != null && entry.node != null) {
            deleteQuietly(entry.node);
        }
        // Also when this attempt's entry is gone already (its watch was closed first) or its create's
        // reply was lost: a node carrying the token may exist, and nobody else would remove it before
        // its lease runs out.
        removeOwnNodes(parentPath(name), ownerToken);
    }

    /**
     * Deletes every node of {@code parent}'s queue that carries {@code ownerToken}, now or, if the client
     * is not connected, once it is connected again (while the session lives the nodes would stay).
     * Does not throw.
     */
    private void removeOwnNodes(String parent, String ownerToken) {
        Cleanup cleanup = new Cleanup(parent, ownerToken);
        if (pendingCleanups.size() < MAX_KNOWN_PARENTS) {
            pendingCleanups.add(cleanup);
        }
        runCleanup(cleanup);
    }

    private void runCleanup(Cleanup cleanup) {
        try {
            for (String child : children(cleanup.parent())) {
                if (LockPaths.ownedBy(child, cleanup.ownerToken())) {
                    deleteQuietly(cleanup.parent() + "/" + child);
                }
            }
            pendingCleanups.remove(cleanup);
        } catch (Exception e) {
            // Typically a connection lost a moment ago, before Curator noticed: done again on reconnect.
            log.debug("Could not look for the nodes of an abandoned attempt in {} yet", cleanup.parent(), e);
        }
    }

    /** A queue to clear of one owner token's nodes. */
    private record Cleanup(String parent, String ownerToken) {}

    @Override
    public ReleaseWatch watch(String name, String ownerToken) {
        String key = key(name, ownerToken);
        Entry entry = new Entry(name, ownerToken, true);
        entries.put(key, entry);
        return new ReleaseWatch() {
            @Override
            public boolean await(Duration timeout) throws InterruptedException {
                return entry.await(timeout.toNanos());
            }

            @Override
            public void close() {
                entries.remove(key, entry);
                if (!entry.granted) {
                    // Gave up: leave the queue, also with a node whose create's reply was lost.
                    String node = entry.node;
                    if (node != null) {
                        deleteQuietly(node);
                    } else if (entry.createMaybeSent) {
                        try {
                            cleanups.execute(() -> removeOwnNodes(entry.parent, ownerToken));
                        } catch (RejectedExecutionException e) {
                            removeOwnNodes(entry.parent, ownerToken);
                        }
                    }
                }
            }
        };
    }

    @Override
    public String describe() {
        return where;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        session.close();
        for (Handle handle : List.copyOf(live)) {
            cancelExpiry(handle);
        }
        if (closeClient) {
            client.close();
        }
    }

    // ------------------------------------------------------------------ sessions and expiry

    /** What the backend does when {@link SessionWatch} reports a change of the connection. */
    private final class SessionEvents implements SessionWatch.Listener {
        @Override
        public void suspended() {
            log.warn(
                    "ZooKeeper connection to {} suspended: {} lease(s) are in doubt and end by their deadlines"
                            + " unless the connection comes back within the session",
                    where,
                    live.size());
        }

        @Override
        public void sessionEnded() {
            for (Handle handle : List.copyOf(live)) {
                markLost(handle, LossReason.SESSION_EXPIRED);
            }
            entries.values().forEach(Entry::signal);
        }

        @Override
        public void connected(long sessionId, long sessionTimeoutMillis) {
            for (Handle handle : List.copyOf(live)) {
                if (handle.sessionId != sessionId) {
                    markLost(handle, LossReason.SESSION_EXPIRED);
                } else {
                    endIfSessionTooShort(handle, sessionTimeoutMillis);
                }
            }
            entries.values().forEach(Entry::signal);
            for (Cleanup cleanup : List.copyOf(pendingCleanups)) {
                try {
                    cleanups.execute(() -> runCleanup(cleanup));
                } catch (RejectedExecutionException e) {
                    pendingCleanups.clear(); // shut down: the nodes end with the session
                }
            }
        }
    }

    /**
     * Ends {@code handle}'s lease (completing its {@code backendLoss}, deleting its node) if its lease
     * time is longer than the session timeout negotiated on the latest connect; returns whether it did.
     *
     * <p>Why ending these, and only these, keeps one holder at a time without shortening anyone's
     * validity (the SPI cannot shorten a live grant): the server renegotiated the session at the connect
     * and expires it no earlier than {@code newTimeout} after the last request it heard, at the connect
     * request or later. A grant whose {@code leaseTime <= newTimeout} counts its validity from its last
     * write's send time: a write sent before the connect gives {@code lastWrite + leaseTime < connect +
     * newTimeout <= expiry}, a write sent on the new connection touches the session itself, giving {@code
     * lastWrite + leaseTime <= lastWrite + newTimeout <= expiry}. So its lease ends, on its own clock,
     * before the server can free its node (equal clock rates assumed, as everywhere here). A grant with a
     * longer lease time has no such bound, and cannot be renewed with it any more (renewals above the
     * timeout are refused): it ends now, which is as soon as this client can know, since the new timeout
     * is learnt on the event thread right after the connect's answer.
     */
    boolean endIfSessionTooShort(Handle handle, long sessionTimeoutMillis) {
        if (handle.leaseMillis <= sessionTimeoutMillis || handle.loss.isDone() || handle.released) {
            return false;
        }
        log.warn(
                "Lock '{}' on {} had a lease of {} ms, longer than the session timeout of {} ms now negotiated:"
                        + " the lease ends now, since the session could end before it",
                handle.name,
                where,
                handle.leaseMillis,
                sessionTimeoutMillis);
        markLost(handle, LossReason.SESSION_EXPIRED);
        return true;
    }

    void markLost(Handle handle, LossReason reason) {
        live.remove(handle);
        cancelExpiry(handle);
        if (!handle.loss.isDone() && !handle.released) {
            // The session may still be alive (Curator's LOST is declared after a suspension as long as
            // the session): make sure the node goes, so the lock is not held by a lease nobody has.
            deleteQuietly(handle.path);
            // Lease callbacks must not run on Curator's event thread.
            callbacks.execute(() -> handle.loss.complete(reason));
        }
    }

    /** The holder's own client deletes its node when its lease runs out unrenewed. */
    void scheduleExpiry(Handle handle, long deadline) {
        cancelExpiry(handle);
        handle.deadline = deadline;
        try {
            handle.expiry = runtime.scheduler()
                    .schedule(
                            () -> runtime.renewalExecutor().execute(() -> {
                                if (!handle.released && !handle.loss.isDone()) {
                                    live.remove(handle);
                                    deleteQuietly(handle.path);
                                }
                            }),
                            Math.max(0, deadline - now()),
                            TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            log.debug("Lease scheduler is shut down; lock node {} ends with its lease or session", handle.path);
        }
    }

    private static void cancelExpiry(Handle handle) {
        ScheduledFuture<?> expiry = handle.expiry;
        if (expiry != null) {
            expiry.cancel(false);
        }
    }

    /**
     * Deletes {@code path} in one round trip; if that fails (connection lost, interrupted), falls back to
     * {@link #deleteQuietly}. Does not throw.
     */
    private void deleteNow(@Nullable String path) {
        if (path == null) {
            return;
        }
        try {
            client.delete().forPath(path);
        } catch (KeeperException.NoNodeException gone) {
            // expired by the waiter behind it, or its session ended: nothing to do
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.debug("Could not delete lock node {} now; deleting it in the background", path, e);
            deleteQuietly(path);
        }
    }

    /** Deletes {@code path} in the background, retried by Curator until it is gone or the session ends. */
    private void deleteQuietly(@Nullable String path) {
        if (path == null) {
            return;
        }
        try {
            client.delete().guaranteed().inBackground().forPath(path);
        } catch (Exception e) {
            log.debug("Could not delete lock node {}", path, e);
        }
    }

    // ------------------------------------------------------------------ helpers

    /**
     * ZooKeeper's {@code sync} on {@code path}: the connected server catches up with the leader before
     * this returns. A server answers reads from what it has applied, and a follower may not yet have
     * applied another client's create or delete that the leader already confirmed: a read without this
     * could show a lock just taken by another process as free, or one just released as held. Bounded like
     * the acquire's calls.
     */
    private void syncWithLeader(String path) throws Exception {
        CompletableFuture<KeeperException.Code> synced = new CompletableFuture<>();
        client.getZookeeperClient()
                .getZooKeeper()
                .sync(namespacePrefix() + path, (rc, p, ctx) -> synced.complete(KeeperException.Code.get(rc)), null);
        KeeperException.Code code = reply(
                synced, sessionTimeoutMillis() + client.getZookeeperClient().getConnectionTimeoutMs());
        if (code != KeeperException.Code.OK && code != KeeperException.Code.NONODE) {
            throw KeeperException.create(code, path);
        }
    }

    private List<String> children(String parent) throws Exception {
        try {
            List<String> children = new ArrayList<>(client.getChildren().forPath(parent));
            children.sort(LockPaths.BY_SEQUENCE);
            return children;
        } catch (KeeperException.NoNodeException e) {
            knownParents.remove(parent);
            return List.of();
        }
    }

    private long requireConnected(String what) {
        if (closed.get()) {
            throw new IllegalStateException("the ZooKeeper backend for " + where + " is closed");
        }
        try {
            if (!client.getZookeeperClient().isConnected()
                    && !client.getZookeeperClient().blockUntilConnectedOrTimedOut()) {
                throw new BackendUnavailableException(
                        "ZooKeeper at " + where + " could not be reached within the connection timeout ("
                                + client.getZookeeperClient().getConnectionTimeoutMs() + " ms) while " + what,
                        null,
                        true);
            }
        } catch (InterruptedException e) {
            throw ZooKeeperErrors.map(e, what, where);
        }
        return sessionTimeoutMillis();
    }

    /** The session timeout the server granted on the latest connect (the requested one until the first). */
    public long sessionTimeoutMillis() {
        return session.sessionTimeoutMillis();
    }

    void requireLeaseWithinSession(Duration leaseTime, long sessionTimeoutMs) {
        if (leaseTime.toMillis() > sessionTimeoutMs) {
            throw new IllegalArgumentException(
                    "leaseTime " + leaseTime + " is longer than the ZooKeeper session timeout ("
                            + sessionTimeoutMs + " ms) negotiated with " + where
                            + ": a lock node cannot outlive its session; use a shorter leaseTime with autoRenew,"
                            + " or a longer sessionTimeout");
        }
    }

    private String parentPath(String name) {
        return basePath + "/" + LockPaths.encode(name);
    }

    private static String key(String name, String ownerToken) {
        return ownerToken + "\u0000" + name;
    }

    /**
     * A node's data: its lease time in milliseconds, a space and the holder ({@link HolderText}). Observers
     * read the lease time from the first field; data without a number there (an older client's is the
     * number alone) counts as a session-long lease.
     */
    static byte[] leaseData(Duration leaseTime, String holder) {
        return (Math.max(1, leaseTime.toMillis()) + " " + holder).getBytes(StandardCharsets.US_ASCII);
    }

    /** The holder named in a node's data after the lease time, if any (an older client's data has none). */
    private static Optional<Holder> holderOf(byte[] data) {
        String text = new String(data, StandardCharsets.US_ASCII).strip();
        int space = text.indexOf(' ');
        return space < 0 ? Optional.empty() : HolderText.decode(text.substring(space + 1));
    }

    long now() {
        return runtime.clock().nanoTime();
    }
}
