package io.lockstep.zookeeper.internal;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LossReason;
import io.lockstep.spi.Extension;
import io.lockstep.zookeeper.internal.ZooKeeperBackend.Handle;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;

/**
 * The renewal of many grants of one {@link ZooKeeperBackend} in one round trip ({@link
 * ZooKeeperBackend#extendAll}): one {@code multi} of {@code setData} ops, each judged as {@link
 * ZooKeeperBackend#extend} judges one. Thread-safe; holds no state of its own between calls.
 */
final class BatchedRenewals {

    private final ZooKeeperBackend backend;
    private final CuratorFramework client;
    private final SessionWatch session;
    private final String where;

    BatchedRenewals(ZooKeeperBackend backend, CuratorFramework client, SessionWatch session, String where) {
        this.backend = backend;
        this.client = client;
        this.session = session;
        this.where = where;
    }

    /**
     * The most renewals in one {@code multi}: a write transaction of 500 {@code setData} ops with the
     * usual paths (about 70 bytes) is about 50 KB on the wire and its reply (one stat per op) about
     * 40 KB, both a few percent of ZooKeeper's default {@code jute.maxbuffer} (1 MB), which a request,
     * its transaction-log entry and its reply must each stay under. Even with 256-byte names (768
     * characters once encoded) 500 ops stay under half of it, and {@link #MAX_MULTI_BYTES} splits a
     * batch whose paths are longer still. The server applies a multi as one transaction, so a bigger one
     * would also hold up other clients' requests behind it for longer.
     */
    static final int MAX_RENEWAL_BATCH = 500;

    /** The request size (estimated from paths and data) above which a batch is split into more multis. */
    static final int MAX_MULTI_BYTES = 512 * 1024;

    /** Write multis one {@link #extendAll} sends before renewing what is left one by one. */
    private static final int MAX_MULTI_ROUNDS = 3;

    /**
     * Renews many grants with one round trip: one {@code multi} of a {@code setData} per grant, each on
     * the version its holder wrote last, exactly as {@link ZooKeeperBackend#extend} writes one. Each lease counts from
     * when the multi was sent. Grants released or lost are answered empty and never written.
     *
     * <p>A multi is all-or-nothing and names only its first failed op; the others are then not applied.
     * So when one fails (a node gone, or a version that changed), one read-only multi reads every node of
     * the batch, and each is judged as {@link ZooKeeperBackend#extend} judges it: a node gone or re-created (another
     * {@code czxid}) is lost with {@code NOT_HELD}; a node of the same {@code czxid} with another version
     * had a renewal applied whose reply was lost, so its version is adopted. The rest are written with
     * a second multi; after {@value #MAX_MULTI_ROUNDS} failed multis (nodes changing under the batch)
     * what is left is renewed one by one through {@link ZooKeeperBackend#extend}.
     *
     * <p>Thread-safe. Throws {@link BackendUnavailableException} when the outcome is unknown (not
     * connected, a lost reply), {@link IllegalArgumentException} (writing nothing) if a lease time is
     * longer than the session timeout.
     */
    List<Optional<Duration>> extendAll(List<Extension<Handle>> extensions) {
        long sessionTimeoutMs = session.sessionTimeoutMillis();
        for (Extension<Handle> extension : extensions) {
            backend.requireLeaseWithinSession(extension.leaseTime(), sessionTimeoutMs);
        }
        List<Optional<Duration>> results = new ArrayList<>(extensions.size());
        List<Renewal> work = new ArrayList<>(extensions.size());
        Map<Handle, Renewal> byHandle = new IdentityHashMap<>();
        for (int i = 0; i < extensions.size(); i++) {
            Extension<Handle> extension = extensions.get(i);
            results.add(Optional.empty());
            Handle handle = extension.handle();
            if (handle.loss.isDone() || handle.released) {
                continue;
            }
            Renewal twin = byHandle.get(handle);
            if (twin != null) {
                // The same grant twice: one write (a second on the same version would fail the multi).
                twin.alsoAt.add(i);
                continue;
            }
            Renewal renewal = new Renewal(i, handle, extension.leaseTime());
            byHandle.put(handle, renewal);
            work.add(renewal);
        }
        if (work.isEmpty()) {
            return results;
        }
        if (!client.getZookeeperClient().isConnected()) {
            // SUSPENDED: as extend, do not wait for a reconnect; the leases end by their deadlines.
            throw new BackendUnavailableException(
                    "ZooKeeper at " + where + " is not connected (the session is in doubt); " + work.size()
                            + " lock(s) cannot be renewed now",
                    null,
                    true);
        }
        try {
            int from = 0;
            while (from < work.size()) {
                int to = from;
                long bytes = 0;
                while (to < work.size() && (to == from || bytes + work.get(to).bytes <= MAX_MULTI_BYTES)) {
                    bytes += work.get(to).bytes;
                    to++;
                }
                renewInMultis(new ArrayList<>(work.subList(from, to)));
                from = to;
            }
        } catch (Exception e) {
            throw ZooKeeperErrors.map(e, "renewing " + work.size() + " lock(s)", where);
        }
        for (Renewal renewal : work) {
            results.set(renewal.index, renewal.result);
            for (int i : renewal.alsoAt) {
                results.set(i, renewal.result);
            }
        }
        return results;
    }

    /** One grant's renewal inside {@link #extendAll}, and its result once known. */
    private static final class Renewal {
        final int index;
        final List<Integer> alsoAt = new ArrayList<>(0);
        final Handle handle;
        final Duration leaseTime;
        final byte[] data;
        /** The op's size in a multi request, roughly: its header, path, data and version. */
        final long bytes;

        Optional<Duration> result = Optional.empty();

        Renewal(int index, Handle handle, Duration leaseTime) {
            this.index = index;
            this.handle = handle;
            this.leaseTime = leaseTime;
            this.data = ZooKeeperBackend.leaseData(leaseTime, handle.holder);
            this.bytes = 32L + handle.path.getBytes(StandardCharsets.UTF_8).length + data.length;
        }
    }

    /** Renews {@code batch} with one multi, and more only where one of them failed. */
    private void renewInMultis(List<Renewal> batch) throws Exception {
        String ns = backend.namespacePrefix();
        long bound =
                session.sessionTimeoutMillis() + client.getZookeeperClient().getConnectionTimeoutMs();
        for (int round = 0; round < MAX_MULTI_ROUNDS; round++) {
            batch.removeIf(r -> r.handle.loss.isDone() || r.handle.released); // never written
            if (batch.isEmpty()) {
                return;
            }
            List<Op> writes = new ArrayList<>(batch.size());
            for (Renewal r : batch) {
                writes.add(Op.setData(ns + r.handle.path, r.data, r.handle.version));
            }
            ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
            long sentAt = backend.now();
            Multi reply = multi(zk, writes, bound);
            if (reply.results.size() != batch.size()) {
                throw new KeeperException.MarshallingErrorException(); // not what a multi answers
            }
            if (reply.code == KeeperException.Code.OK) {
                for (int i = 0; i < batch.size(); i++) {
                    Renewal r = batch.get(i);
                    if (!(reply.results.get(i) instanceof OpResult.SetDataResult written)) {
                        throw new KeeperException.MarshallingErrorException();
                    }
                    r.handle.version = written.getStat().getVersion();
                    r.handle.leaseMillis = r.leaseTime.toMillis();
                    backend.scheduleExpiry(r.handle, sentAt + r.leaseTime.toNanos());
                    r.result = Optional.of(r.leaseTime);
                }
                long timeout = session.sessionTimeoutMillis(); // as extend: judged again once applied
                for (Renewal r : batch) {
                    if (backend.endIfSessionTooShort(r.handle, timeout)) {
                        r.result = Optional.empty();
                    }
                }
                return;
            }
            if (reply.code != KeeperException.Code.NONODE && reply.code != KeeperException.Code.BADVERSION) {
                throw KeeperException.create(reply.code);
            }
            // Nothing was applied, and only the first failure is named: look at every node of the batch.
            checkAfterFailedMulti(zk, ns, batch, bound);
        }
        // Nodes keep changing under the batch: the rest one by one, each exactly as extend does it.
        for (Renewal r : batch) {
            r.result = backend.extend(r.handle, r.leaseTime);
        }
    }

    /**
     * One read-only multi over the batch's nodes: removes from {@code batch} the grants that are lost
     * (marked {@code NOT_HELD}) or were judged on their own, and adopts the version of nodes whose
     * renewal was applied although its reply was lost.
     */
    private void checkAfterFailedMulti(ZooKeeper zk, String ns, List<Renewal> batch, long bound) throws Exception {
        List<Op> reads = new ArrayList<>(batch.size());
        for (Renewal r : batch) {
            reads.add(Op.getData(ns + r.handle.path));
        }
        Multi read;
        try {
            read = multi(zk, reads, bound);
        } catch (KeeperException.UnimplementedException olderThan36) {
            // A server without read-only multis (before ZooKeeper 3.6): each as extend does it, alone.
            for (Renewal r : batch) {
                r.result = backend.extend(r.handle, r.leaseTime);
            }
            batch.clear();
            return;
        }
        if (read.results.size() != batch.size()) {
            throw new KeeperException.MarshallingErrorException();
        }
        List<Renewal> left = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            Renewal r = batch.get(i);
            OpResult result = read.results.get(i);
            if (result instanceof OpResult.GetDataResult got) {
                if (got.getStat().getCzxid() != r.handle.czxid) {
                    backend.markLost(r.handle, LossReason.NOT_HELD);
                } else {
                    r.handle.version = got.getStat().getVersion();
                    left.add(r);
                }
            } else if (result instanceof OpResult.ErrorResult error
                    && error.getErr() == KeeperException.Code.NONODE.intValue()) {
                backend.markLost(r.handle, LossReason.NOT_HELD);
            } else {
                // Not readable (an ACL without READ for this identity): as extend does it, alone.
                r.result = backend.extend(r.handle, r.leaseTime);
            }
        }
        batch.clear();
        batch.addAll(left);
    }

    /**
     * Sends one multi and waits for its reply: {@code results} holds one result per op unless the
     * request failed as a whole (then {@code code} says why). The client fails pending calls when it
     * gives a connection up; {@code boundMillis} only guards against a reply that never comes at all.
     */
    private static Multi multi(ZooKeeper zk, List<Op> ops, long boundMillis) throws Exception {
        CompletableFuture<Multi> reply = new CompletableFuture<>();
        zk.multi(
                ops,
                (rc, path, ctx, results) ->
                        reply.complete(new Multi(KeeperException.Code.get(rc), results == null ? List.of() : results)),
                null);
        Multi multi = ZooKeeperBackend.reply(reply, boundMillis);
        if (multi.results.isEmpty() && multi.code != KeeperException.Code.OK) {
            throw KeeperException.create(multi.code);
        }
        return multi;
    }

    /** The reply to a multi: the first failed op's code (OK if none), and every op's result. */
    private record Multi(KeeperException.Code code, List<OpResult> results) {}
}
