package io.lockstep.etcd.internal;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.ClockAssumption;
import io.lockstep.Holder;
import io.lockstep.LockRuntime;
import io.lockstep.LossReason;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.AttemptContext;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.Extension;
import io.lockstep.spi.Grant;
import io.lockstep.spi.HolderText;
import io.lockstep.spi.LockBackend;
import io.lockstep.spi.ReleaseWatch;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks on etcd the way etcd's own concurrency mutex takes them: each contender puts a key under the
 * lock's prefix, bound to an etcd lease of its provider (a session); keys are ordered by create
 * revision; the lowest holds the lock and its create revision is the fencing token; a waiter watches
 * only the deletion of the key just before its own. A provider reuses its keys of a lock ({@link
 * QueueSlots}): one per holder or waiter it has there at once, not one per acquire, so etcd's index of
 * deleted keys, which the acquire's read walks, does not grow with every acquire.
 *
 * <p>Sessions: one etcd lease per provider and lease-time class, with a TTL of 1.5 × the lease time in
 * whole seconds, kept alive by one keep-alive per session every TTL/4 on the runtime's scheduler (the
 * round trip is asynchronous). A grant's validity is tracked client-side: exactly the lease time asked,
 * capped by what the session is known to last (the last keep-alive's send time plus its TTL less a drift
 * allowance of {@code TTL × driftFactor + 2 ms}, as etcd counts the TTL on the leader's clock); when a
 * grant's validity runs out without renewal, its key is deleted (within one {@link ExpiryTicks} tick,
 * 10 ms), so the lock frees at its lease time while the holder lives, and at the session's TTL when the
 * holder died or was cut off. What one held lock costs in the heap and per renewal does not grow with
 * the others: the ends of validity share coarse ticks, and a renewal moves no timer.
 *
 * <p>Extensions are linearizable reads: the key's create revision is compared and, in the same
 * transaction, the key is read (count only), so a member that lags or lost the quorum never answers
 * from its own copy. Renewals come in batches of up to {@value #MAX_TXN_OPS} ({@link #extendAll}): one
 * read-only transaction for the whole batch (keys only: the values stay on the server), a result per
 * grant. Renewal traffic at the server is therefore one transaction per {@value #MAX_TXN_OPS} due
 * renewals plus one keep-alive per session every TTL/4, whatever the number of locks held.
 */
public final class EtcdBackend implements LockBackend<EtcdBackend.Handle> {

    private static final Logger log = LoggerFactory.getLogger(EtcdBackend.class);

    /**
     * What every etcd provider claims, with the default drift factor; a provider declares its own ({@link
     * #info()}).
     */
    public static final ProviderInfo INFO = new ProviderInfo(
            "etcd",
            StrengthTier.CONSENSUS,
            EnumSet.of(
                    Capability.FENCING,
                    Capability.LEASE_EXPIRY,
                    Capability.EXTEND,
                    Capability.NOTIFIED_WAIT,
                    Capability.FAIR),
            // The session lease's TTL runs on the leader's clock: the keep-alive cap leaves driftFactor of it.
            ClockAssumption.rateDrift(ClockDrift.DEFAULT_FACTOR));

    private static final GetOption FIRST = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .withLimit(1)
            .build();

    /**
     * The queue's head, name and revisions only: an attempt needs to know whether the head is its own key,
     * not whose it is (its value stays on the server).
     */
    private static final GetOption HEAD_KEY = GetOption.builder()
            .isPrefix(true)
            .withKeysOnly(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .withLimit(1)
            .build();

    /** The two newest keys under a lock's prefix, by create revision (names and revisions only). */
    private static final GetOption NEWEST_TWO = GetOption.builder()
            .isPrefix(true)
            .withKeysOnly(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.DESCEND)
            .withLimit(2)
            .build();

    /** This process without a label: the holder of most grants. */
    private static final Holder UNLABELLED = Holder.thisProcess(null);

    /** A renewal reads each key's create revision; the value (owner token and holder) stays on the server. */
    private static final GetOption KEYS_ONLY =
            GetOption.builder().withKeysOnly(true).build();

    /** A linearizable read of nothing but a count: what turns a compare-only transaction into a quorum read. */
    private static final GetOption COUNT_ONLY =
            GetOption.builder().withCountOnly(true).build();

    /**
     * What names a grant: the lock, its queue key, the key's create revision (the fence), the owner and the
     * holder its key's value names, and the key's {@linkplain QueueSlots slot}. The value ({@code <owner token> <host> <pid>[ <label>]}) is rebuilt from
     * them when the key moves to another session rather than kept (about 120 bytes less per held lock).
     */
    public record Handle(String name, ByteSequence key, long revision, String ownerToken, Holder holder, int slot) {

        /** The key's value, {@code <owner token> <host> <pid>[ <label>]}. */
        public ByteSequence value() {
            return valueOf(ownerToken, holder);
        }
    }

    private static ByteSequence valueOf(String ownerToken, Holder holder) {
        return ByteSequence.from(ownerToken + " " + HolderText.encode(holder), StandardCharsets.US_ASCII);
    }

    private final Client client;
    private final boolean ownsClient;
    private final KV kv;
    private final EtcdKeys keys;
    private final String where;
    private final Duration timeout;
    private final LockRuntime runtime;
    private final double driftFactor;
    private final ProviderInfo info;

    private final Object sessionLock = new Object();
    private final Map<Long, Session> sessions = new ConcurrentHashMap<>();
    private final Map<ByteSequence, Held> held = new ConcurrentHashMap<>();
    /** The ends of the held grants' validity, timed in coarse ticks. */
    private final ExpiryTicks<Held> expiries;

    private final Map<String, EtcdWaiter> waiters = new ConcurrentHashMap<>();
    /** Which queue keys of each lock this provider uses. */
    private final QueueSlots slots = new QueueSlots();
    /** What names this provider's queue keys apart from every other provider's: 64 random bits. */
    private final String providerId;
    /** Owner token → the queue key of an attempt not (yet) granted, until etcd confirmed it gone. */
    private final Map<String, Queued> queued = new ConcurrentHashMap<>();

    private final AtomicBoolean closed = new AtomicBoolean();
    private final EtcdJanitor janitor;
    private final LateAcquireFence fence;
    /** How many endpoints the client spreads calls over (from {@code where}). */
    private final int endpoints;

    private volatile long serverMinTtl;

    /**
     * The queue key an attempt claimed: slot {@code slot} of lock {@code name}, and the value it puts there;
     * once a reply showed the key on etcd, its create revision ({@link #seenAt}; 0 before, and again after a
     * reply showed it gone).
     */
    private static final class Queued {
        private final String name;
        private final int slot;
        private final ByteSequence key;
        private final ByteSequence value;
        volatile long seenAt;

        Queued(String name, int slot, ByteSequence key, ByteSequence value) {
            this.name = name;
            this.slot = slot;
            this.key = key;
            this.value = value;
        }

        String name() {
            return name;
        }

        int slot() {
            return slot;
        }

        ByteSequence key() {
            return key;
        }

        ByteSequence value() {
            return value;
        }
    }

    /**
     * @param client the jetcd client; closed with the backend if {@code ownsClient}
     * @param keyPrefix validated prefix of every key
     * @param where the endpoints, for messages (never a password)
     * @param timeout the longest any one round trip may take
     * @param driftFactor validated clock drift factor (see {@link ClockDrift}): how much faster the leader's
     *     clock, which counts the session leases' TTL, may run than this client's
     */
    public EtcdBackend(
            Client client,
            boolean ownsClient,
            String keyPrefix,
            String where,
            Duration timeout,
            LockRuntime runtime,
            double driftFactor) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.kv = client.getKVClient();
        this.keys = new EtcdKeys(keyPrefix);
        byte[] id = new byte[8];
        new SecureRandom().nextBytes(id);
        this.providerId = Base64.getUrlEncoder().withoutPadding().encodeToString(id);
        this.fence = new LateAcquireFence(keys);
        this.endpoints = Math.max(1, Math.min(7, where.split(",").length));
        this.where = where;
        this.timeout = timeout;
        this.runtime = runtime;
        this.expiries = new ExpiryTicks<>(runtime.scheduler(), this::now, this::expire);
        this.driftFactor = ClockDrift.requireFactor(driftFactor);
        this.info = INFO.withClock(ClockAssumption.rateDrift(driftFactor));
        this.janitor = new EtcdJanitor(client, timeout, runtime, this::removeKey);
        warmUp(keyPrefix);
    }

    /**
     * Opens the connection (and, with credentials, fetches the auth token) in the background now, so the
     * first acquire does not pay for them: a lease's validity counts from when its acquire was sent while
     * its first renewal is due a third of the lease time after the acquire returned, so each round trip
     * the first acquire spends on setting up is taken from the first renewal's margin. Never blocks and
     * never fails the construction: an unreachable server is reported by the first real call.
     */
    private void warmUp(String keyPrefix) {
        try {
            kv.get(
                            EtcdKeys.bytes(keyPrefix),
                            GetOption.builder().withCountOnly(true).build())
                    .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                    .whenComplete((r, e) -> {
                        if (e != null) {
                            log.debug(
                                    "Connecting to etcd at {} ahead of the first lock failed: {}", where, e.toString());
                        }
                    });
        } catch (RuntimeException e) {
            log.debug("Connecting to etcd at {} ahead of the first lock failed: {}", where, e.toString());
        }
    }

    @Override
    public ProviderInfo info() {
        return info;
    }

    /**
     * The first key of the lock's queue is its holder: its create revision is the fence, and its etcd
     * lease's time to live is how long until etcd frees it if its holder stops renewing (an upper bound:
     * a live holder that stops renewing deletes its key sooner, at the end of its lease time). The key's
     * value, the owner token, is never read into the answer. A free lock has no last fence on etcd.
     */
    @Override
    public Optional<io.lockstep.LockState> inspect(String name) {
        String what = "inspecting lock '" + name + "'";
        List<KeyValue> first = await(kv.get(keys.lockPrefix(name), FIRST), what).getKvs();
        if (first.isEmpty()) {
            return Optional.of(new io.lockstep.LockState(false, OptionalLong.empty(), Optional.empty()));
        }
        KeyValue holder = first.get(0);
        // The value is the owner token, a space and the holder: only what follows the space is shown.
        String value = holder.getValue().toString(StandardCharsets.US_ASCII);
        int space = value.indexOf(' ');
        Optional<Holder> who = space < 0 ? Optional.empty() : HolderText.decode(value.substring(space + 1));
        Optional<Duration> remaining = Optional.empty();
        if (holder.getLease() != 0) {
            long ttl = await(
                            client.getLeaseClient()
                                    .timeToLive(holder.getLease(), io.etcd.jetcd.options.LeaseOption.DEFAULT),
                            what)
                    .getTTL();
            remaining = ttl >= 0 ? Optional.of(Duration.ofSeconds(ttl)) : Optional.empty();
        }
        return Optional.of(
                new io.lockstep.LockState(true, OptionalLong.of(holder.getCreateRevision()), remaining, who));
    }

    @Override
    public Attempt<Handle> tryLock(String name, String ownerToken, Duration leaseTime) {
        return tryLock(new AttemptContext(name, ownerToken, leaseTime));
    }

    /**
     * Puts the attempt's key with the value {@code <owner token> <host> <pid>[ <label>]}: the holder rides
     * in the put the acquire makes anyway, so {@link #inspect} can name it at no extra cost. Nothing reads
     * the value to decide anything (the create revision does).
     */
    @Override
    public Attempt<Handle> tryLock(AttemptContext attempt) {
        // Unlabelled acquires share one Holder, so a held lock does not keep its own copy.
        Holder holder = attempt.holder().equals(UNLABELLED) ? UNLABELLED : attempt.holder();
        return tryLock(attempt.name(), attempt.ownerToken(), holder, attempt.leaseTime(), true);
    }

    private Attempt<Handle> tryLock(
            String name, String ownerToken, Holder holder, Duration leaseTime, boolean mayRetry) {
        Session session = sessionFor(leaseTime);
        // A waiter's next attempt, or a retry after a lost reply, finds the key its first one claimed.
        Queued entry = queued.computeIfAbsent(ownerToken, token -> queue(name, token, holder));
        ByteSequence key = entry.key();
        ByteSequence value = entry.value();
        ByteSequence prefix = keys.lockPrefix(name);
        long sentAt = now();
        TxnResponse reply = null;
        long seenAt = entry.seenAt;
        if (seenAt > 0) {
            // A waiter woken (or polling) with its key on etcd: read whether it is first now, no write.
            reply = await(recheckTxn(key, prefix, seenAt), "acquiring lock '" + name + "'");
            if (reply.isSucceeded()) {
                entry.seenAt = 0; // the key is gone (its session ended, or the attempt was given up): queue again
                reply = null;
            }
        }
        boolean rechecked = reply != null;
        if (reply == null) {
            try {
                reply = sendAcquire(name, ownerToken, value, session, key, prefix);
            } catch (EtcdErrors.LeaseNotFound e) {
                // The session lease ended on etcd before we noticed: end it here and queue on a new one.
                session.end(LossReason.SESSION_EXPIRED);
                if (!mayRetry) {
                    throw sessionEnded("acquiring lock '" + name + "'", e);
                }
                return tryLock(name, ownerToken, holder, leaseTime, false);
            }
        }
        long revision;
        boolean head; // whether our key heads the queue: the lock is ours
        // The key just before ours, when the reply says (a recheck's and a fresh put's do); else null.
        @Nullable List<KeyValue> before = null;
        Session mine = session;
        if (reply.isSucceeded()) {
            revision = reply.getHeader().getRevision();
            // The put made the newest key under the prefix: the newest two are ours and the one before it.
            // With no key before ours, ours is also the oldest, the queue's head.
            List<KeyValue> newest = reply.getGetResponses().get(0).getKvs();
            before = newest.size() > 1 ? newest.subList(1, 2) : List.of();
            // etcd reads a transaction's ranges after its put, so the newest key is ours; never held unless seen.
            head = before.isEmpty()
                    && !newest.isEmpty()
                    && newest.get(0).getKey().equals(key);
        } else {
            // Our key is already queued (a waiter's next attempt, or a retry after a lost reply).
            List<KeyValue> ownKvs = reply.getGetResponses().get(0).getKvs();
            if (ownKvs.isEmpty()) {
                // No key, so the compare failed on the tombstone: this attempt was given up already.
                throw new BackendUnavailableException(
                        "acquiring lock '" + name + "' failed: the attempt was already given up", null, false);
            }
            KeyValue own = ownKvs.get(0);
            if (!own.getValue().equals(value)) {
                // A slot is claimed until its key is confirmed gone, so this is never expected.
                throw new BackendUnavailableException(
                        "acquiring lock '" + name + "' failed: its queue key on etcd at " + where
                                + " holds another attempt's entry",
                        null,
                        false);
            }
            revision = own.getCreateRevision();
            List<KeyValue> first = reply.getGetResponses().get(1).getKvs();
            head = !first.isEmpty() && first.get(0).getKey().equals(key);
            if (rechecked && revision == seenAt) {
                // Read below the revision the key was seen at; a key put again since looks its predecessor up.
                before = reply.getGetResponses().get(2).getKvs();
            }
            Session bound = sessionByLease(own.getLease());
            if (bound == null) {
                // Queued on a session that has since ended here: its validity cannot be vouched for.
                await(deleteKey(leftover(entry, ownerToken), null), "removing a queue entry");
                entry.seenAt = 0;
                if (!mayRetry) {
                    throw new BackendUnavailableException(
                            "acquiring lock '" + name + "' failed: the session of its queue entry on etcd at " + where
                                    + " ended",
                            null,
                            true);
                }
                return tryLock(name, ownerToken, holder, leaseTime, false);
            }
            mine = bound;
        }
        EtcdWaiter waiter = waiters.get(ownerToken);
        if (head) {
            // The key exists at this revision, so its session lease was alive when etcd answered: the
            // check etcd 3.4's lock service lacked after waiting (etcd#11456).
            long validityNanos = Math.min(leaseTime.toNanos(), mine.deadline - sentAt);
            if (validityNanos <= 0) {
                throw new BackendUnavailableException(
                        "acquiring lock '" + name + "' failed: the session on etcd at " + where
                                + " could not be kept alive",
                        null,
                        true);
            }
            Handle handle = new Handle(name, key, revision, ownerToken, holder, entry.slot());
            Held h = new Held(handle, mine, sentAt + validityNanos);
            held.put(key, h);
            if (mine.lost.isDone()) {
                held.remove(key, h);
                throw new BackendUnavailableException(
                        "acquiring lock '" + name + "' failed: its session on etcd at " + where + " ended", null, true);
            }
            scheduleExpiry(h);
            if (waiter != null) {
                waiter.granted();
            }
            queued.remove(ownerToken, entry); // the grant's handle names the key and slot from now on
            return Attempt.granted(
                    new Grant<>(handle, OptionalLong.of(revision), Duration.ofNanos(validityNanos), h.loss));
        }
        if (waiter == null) {
            // A caller that does not wait leaves nothing queued.
            await(removeKey(leftover(entry, ownerToken)), "removing a queue entry");
            return Attempt.busy(Duration.ZERO);
        }
        entry.seenAt = revision;
        long readAt = reply.getHeader().getRevision();
        if (before == null) {
            // A retry that found its key put already: look the key before ours up on its own.
            GetResponse lookup = await(kv.get(prefix, before(revision)), "looking up the waiter before '" + name + "'");
            before = lookup.getKvs();
            readAt = lookup.getHeader().getRevision();
        }
        if (before.isEmpty()) {
            waiter.signal(); // the keys before ours are gone already: look again at once
        } else {
            KeyValue predecessor = before.get(0);
            waiter.watch(predecessor.getKey(), predecessor.getCreateRevision(), readAt);
        }
        return Attempt.busy(Duration.ofSeconds(1));
    }

    /** Claims a queue key for the attempt of {@code ownerToken} on {@code name}: the lock's lowest free slot. */
    private Queued queue(String name, String ownerToken, Holder holder) {
        int slot = slots.claim(name, ownerToken);
        return new Queued(name, slot, keys.key(name, providerId, slot), valueOf(ownerToken, holder));
    }

    /**
     * The acquire transaction: put our key on the session if it does not exist and the attempt was not
     * given up (see {@link LateAcquireFence}), and read the newest two keys under the lock's prefix: ours
     * and the one just before it, if any (when there is none, ours heads the queue); or, when our key was
     * queued already, read it and the queue's head. When the first try gets no
     * answer within {@code timeout}, the same transaction is sent again once per endpoint, all at once,
     * and the first answer wins: jetcd spreads calls over the endpoints round-robin, so a member that
     * hangs (stalled, frozen) costs one timeout rather than the attempt, and the call takes at most
     * about 2 × {@code timeout}. The tries are idempotent (a try that finds the key already put reads
     * it), and every unanswered one is remembered for the fence.
     */
    private TxnResponse sendAcquire(
            String name,
            String ownerToken,
            ByteSequence value,
            Session session,
            ByteSequence key,
            ByteSequence prefix) {
        String what = "acquiring lock '" + name + "'";
        try {
            return awaitRaw(acquireTxn(name, ownerToken, value, session, key, prefix), what);
        } catch (BackendUnavailableException e) {
            fence.unanswered(ownerToken, session.leaseId); // it may still be applied later
            if (!e.isTransient()) {
                throw e;
            }
            log.debug("{} on etcd at {}: no answer, trying every endpoint: {}", what, where, e.toString());
        }
        CompletableFuture<TxnResponse> first = new CompletableFuture<>();
        AtomicInteger failed = new AtomicInteger();
        for (int i = 0; i < endpoints; i++) {
            acquireTxn(name, ownerToken, value, session, key, prefix).whenComplete((reply, failure) -> {
                if (failure == null) {
                    first.complete(reply);
                } else if (failed.incrementAndGet() == endpoints) {
                    first.completeExceptionally(failure);
                }
            });
        }
        try {
            return awaitRaw(first, what);
        } catch (BackendUnavailableException e) {
            fence.unanswered(ownerToken, session.leaseId);
            throw e;
        }
    }

    private CompletableFuture<TxnResponse> acquireTxn(
            String name,
            String ownerToken,
            ByteSequence value,
            Session session,
            ByteSequence key,
            ByteSequence prefix) {
        return kv.txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)), fence.notGivenUp(name, ownerToken))
                .Then(
                        Op.put(
                                key,
                                value,
                                PutOption.builder().withLeaseId(session.leaseId).build()),
                        Op.get(prefix, NEWEST_TWO))
                .Else(Op.get(key, GetOption.DEFAULT), Op.get(prefix, HEAD_KEY))
                .commit();
    }

    /**
     * A queued waiter's next look, read-only: if its key is gone the compare holds and nothing is read;
     * otherwise its key, the queue's head and the key just before its own (created before {@code
     * revision}), as the acquire transaction's "already queued" branch reads the first two. etcd sends a
     * transaction with a write in either branch through consensus, so the acquire transaction sent again
     * cost a log entry (fsynced on every member) per wake-up; this is a linearizable read (its gets are
     * not serializable), which etcd answers from the leader's committed state without writing.
     */
    private CompletableFuture<TxnResponse> recheckTxn(ByteSequence key, ByteSequence prefix, long revision) {
        return kv.txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                .Then()
                .Else(Op.get(key, GetOption.DEFAULT), Op.get(prefix, HEAD_KEY), Op.get(prefix, before(revision)))
                .commit();
    }

    /** The newest key under a lock's prefix created before {@code revision} (name and revisions only). */
    private static GetOption before(long revision) {
        return GetOption.builder()
                .isPrefix(true)
                .withKeysOnly(true)
                .withMaxCreateRevision(revision - 1)
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.DESCEND)
                .withLimit(1)
                .build();
    }

    @Override
    public Optional<Duration> extend(Handle handle, Duration leaseTime) {
        Held h = heldFor(handle);
        if (h == null) {
            return Optional.empty();
        }
        Session session = sessionFor(leaseTime);
        long sentAt = now();
        Cmp same = new Cmp(handle.key(), Cmp.Op.EQUAL, CmpTarget.createRevision(handle.revision()));
        TxnResponse reply;
        if (session == h.session) {
            // Still our key on a live session: a read-only check, no write. The count-only read makes it
            // linearizable: etcd serves a transaction without a non-serializable read from the local
            // store of whichever member gets it, so a member that lags or is cut off from the quorum
            // would answer from its stale copy: "gone" for a key just created, or "still ours" for a key
            // the quorum has deleted.
            reply = await(
                    kv.txn().If(same).Then(Op.get(handle.key(), COUNT_ONLY)).commit(),
                    "extending lock '" + handle.name() + "'");
        } else {
            // Another lease-time class: move the key to that session; its create revision (the fence) stays.
            try {
                reply = awaitRaw(
                        kv.txn()
                                .If(same)
                                .Then(Op.put(
                                        handle.key(),
                                        handle.value(),
                                        PutOption.builder()
                                                .withLeaseId(session.leaseId)
                                                .build()))
                                .commit(),
                        "extending lock '" + handle.name() + "'");
            } catch (EtcdErrors.LeaseNotFound e) {
                session.end(LossReason.SESSION_EXPIRED);
                throw sessionEnded("extending lock '" + handle.name() + "'", e);
            }
        }
        return extended(h, reply.isSucceeded(), session, sentAt, leaseTime);
    }

    /** What etcd allows in one transaction by default ({@code --max-txn-ops}). */
    static final int MAX_TXN_OPS = 128;

    /** Up to {@value #MAX_TXN_OPS} renewals in one read-only transaction. */
    @Override
    public int maxRenewalBatch() {
        return MAX_TXN_OPS;
    }

    /**
     * Renews many grants with one round trip: the session's keep-alive already keeps their keys, so a
     * renewal only has to check that each key is still this grant's (same create revision). One
     * transaction reads every key of the batch; each key is judged on its own, so a batch reports
     * exactly which grants were lost. The reads are linearizable (etcd confirms with the quorum
     * before answering). A grant whose lease-time class changed (its key must move to another
     * session, a write) is extended on its own, as by {@link #extend}. Thread-safe; throws {@link
     * BackendUnavailableException} when the batch's outcome is unknown.
     */
    @Override
    public List<Optional<Duration>> extendAll(List<Extension<Handle>> extensions) {
        List<Optional<Duration>> results = new ArrayList<>(extensions.size());
        List<Integer> batched = new ArrayList<>();
        List<Held> batchedHeld = new ArrayList<>();
        List<Session> batchedSessions = new ArrayList<>();
        for (int i = 0; i < extensions.size(); i++) {
            Extension<Handle> e = extensions.get(i);
            Held h = heldFor(e.handle());
            results.add(Optional.empty());
            if (h == null) {
                continue;
            }
            Session session = sessionFor(e.leaseTime());
            if (session != h.session) {
                results.set(i, extend(e.handle(), e.leaseTime()));
                continue;
            }
            batched.add(i);
            batchedHeld.add(h);
            batchedSessions.add(session);
        }
        if (batched.isEmpty()) {
            return results;
        }
        Op[] reads = new Op[batched.size()];
        for (int j = 0; j < reads.length; j++) {
            reads[j] = Op.get(batchedHeld.get(j).handle.key(), KEYS_ONLY);
        }
        long sentAt = now();
        TxnResponse reply = await(kv.txn().Then(reads).commit(), "extending " + reads.length + " locks");
        List<GetResponse> got = reply.getGetResponses();
        if (got.size() != reads.length) {
            throw new BackendUnavailableException(
                    "extending " + reads.length + " locks: etcd at " + where + " answered " + got.size() + " reads",
                    null,
                    true);
        }
        for (int j = 0; j < reads.length; j++) {
            Held h = batchedHeld.get(j);
            List<KeyValue> kvs = got.get(j).getKvs();
            boolean mine = !kvs.isEmpty() && kvs.get(0).getCreateRevision() == h.handle.revision();
            int i = batched.get(j);
            results.set(
                    i,
                    extended(
                            h,
                            mine,
                            batchedSessions.get(j),
                            sentAt,
                            extensions.get(i).leaseTime()));
        }
        return results;
    }

    /** The end of an extension: forget a grant no longer ours, else count its new validity from {@code sentAt}. */
    private Optional<Duration> extended(Held h, boolean stillOurs, Session session, long sentAt, Duration leaseTime) {
        if (!stillOurs) {
            forget(h);
            return Optional.empty();
        }
        h.session = session;
        long validityNanos = Math.min(leaseTime.toNanos(), session.deadline - sentAt);
        if (validityNanos <= 0 || session.lost.isDone()) {
            throw new BackendUnavailableException(
                    "extending lock '" + h.handle.name() + "' failed: the session on etcd at " + where
                            + " could not be kept alive",
                    null,
                    true);
        }
        h.validUntil = sentAt + validityNanos;
        scheduleExpiry(h);
        return Optional.of(Duration.ofNanos(validityNanos));
    }

    @Override
    public boolean release(Handle handle) {
        Held h = heldFor(handle);
        if (h != null) {
            forget(h);
        }
        EtcdJanitor.Leftover leftover = leftover(handle);
        TxnResponse reply;
        try {
            reply = await(removeKey(leftover), "releasing lock '" + handle.name() + "'");
        } catch (RuntimeException e) {
            // Not confirmed gone: the session keeps the key alive while this provider lives, so it must
            // not be forgotten. The janitor deletes it (compared on its create revision) once etcd answers.
            janitor.removeKey(leftover);
            throw e;
        }
        return reply.isSucceeded();
    }

    /**
     * The lease has ended: a grant whose key was not confirmed gone (its release failed or never ran)
     * is handed to the janitor, which deletes the key once etcd answers.
     */
    @Override
    public void dispose(Handle handle) {
        Held h = heldFor(handle);
        if (h != null) {
            forget(h);
            janitor.removeKey(leftover(handle));
        } else if (fence.needsTombstone(handle.ownerToken())) {
            janitor.removeKey(leftover(handle)); // writes the tombstone a late acquire must meet
        } else if (slots.isClaimed(handle.name(), handle.slot(), handle.ownerToken())) {
            // Lost with its session, or its release failed: the slot is free once etcd confirms the key gone.
            janitor.removeKey(leftover(handle));
        }
    }

    @Override
    public void abandon(String name, String ownerToken) {
        Queued entry = queued.get(ownerToken);
        if (entry == null) {
            return; // no key was claimed for this attempt, or its key was confirmed gone already
        }
        EtcdJanitor.Leftover leftover = leftover(entry, ownerToken);
        try {
            await(removeKey(leftover), "removing a queue entry");
        } catch (RuntimeException e) {
            log.debug(
                    "Could not remove lock '{}' on etcd at {} now; retrying in the background: {}",
                    name,
                    where,
                    e.toString());
            janitor.removeKey(leftover);
        }
    }

    @Override
    public ReleaseWatch watch(String name, String ownerToken) {
        EtcdWaiter waiter = new EtcdWaiter(client, where, w -> {
            waiters.remove(ownerToken, w);
            if (!w.wasGranted()) {
                // A waiter that gives up leaves the queue at once, so it blocks nobody until its TTL.
                abandon(name, ownerToken);
            }
        });
        waiters.put(ownerToken, waiter);
        return waiter;
    }

    @Override
    public String describe() {
        return "etcd at " + where;
    }

    /** The ids of this backend's live session leases (for operations and fault tests). */
    public List<Long> sessionLeaseIds() {
        List<Long> ids = new ArrayList<>();
        for (Session s : sessions.values()) {
            ids.add(s.leaseId);
        }
        return ids;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        janitor.close();
        for (EtcdWaiter w : List.copyOf(waiters.values())) {
            w.close();
        }
        List<CompletableFuture<?>> revokes = new ArrayList<>();
        for (Session s : List.copyOf(sessions.values())) {
            s.end(LossReason.CONNECTION_LOST);
            revokes.add(client.getLeaseClient().revoke(s.leaseId));
        }
        try {
            await(CompletableFuture.allOf(revokes.toArray(CompletableFuture[]::new)), "closing sessions");
        } catch (RuntimeException e) {
            log.debug("Could not revoke the sessions on etcd at {}; they end by their TTL: {}", where, e.toString());
        }
        if (ownsClient) {
            client.close();
        }
    }

    // ------------------------------------------------------------------ sessions

    /** The TTL in whole seconds of the session for locks of {@code leaseTime}: 1.5 × it, rounded up. */
    static long ttlSeconds(Duration leaseTime) {
        long millis = leaseTime.toMillis();
        return Math.max(1, (millis * 3 + 1999) / 2000);
    }

    /**
     * The keep-alive cap: how long, on this client's monotonic clock, etcd is known to keep a session lease
     * that a grant or keep-alive sent at {@code sentAt} gave {@code ttlSeconds}: the TTL less the drift
     * allowance ({@link ClockDrift#validity}), since the leader counts the TTL on its own clock, which may
     * run up to {@code driftFactor} faster than ours.
     */
    static long keptUntil(long sentAt, long ttlSeconds, double driftFactor) {
        return sentAt
                + ClockDrift.validity(Duration.ofSeconds(ttlSeconds), driftFactor)
                        .toNanos();
    }

    private Session sessionFor(Duration leaseTime) {
        long ttl = ttlSeconds(leaseTime);
        if (closed.get()) {
            throw new IllegalStateException("the etcd backend at " + where + " is closed");
        }
        long min = serverMinTtl;
        if (ttl < min) {
            throw tooShort(leaseTime, ttl, min);
        }
        Session s = sessions.get(ttl);
        if (s != null && !s.lost.isDone()) {
            return s;
        }
        synchronized (sessionLock) {
            s = sessions.get(ttl);
            if (s != null && !s.lost.isDone()) {
                return s;
            }
            long sentAt = now();
            LeaseGrantResponse granted =
                    await(client.getLeaseClient().grant(ttl), "granting a session lease of " + ttl + " s");
            if (granted.getTTL() != ttl) {
                client.getLeaseClient().revoke(granted.getID());
                serverMinTtl = Math.max(serverMinTtl, granted.getTTL());
                throw tooShort(leaseTime, ttl, granted.getTTL());
            }
            Session created = new Session(ttl, granted.getID(), keptUntil(sentAt, ttl, driftFactor));
            sessions.put(ttl, created);
            created.scheduleKeepAlive(created.period());
            return created;
        }
    }

    private IllegalArgumentException tooShort(Duration leaseTime, long ttl, long serverTtl) {
        Duration least = Duration.ofMillis(serverTtl * 2000 / 3);
        return new IllegalArgumentException("leaseTime " + leaseTime + " is too short for etcd at " + where
                + ": its locks live on an etcd lease of 1.5 x leaseTime in whole seconds (" + ttl
                + " s here), and this server grants leases of at least " + serverTtl
                + " s (1.5 x its election timeout); use a leaseTime of at least " + least);
    }

    private @Nullable Session sessionByLease(long leaseId) {
        for (Session s : sessions.values()) {
            if (s.leaseId == leaseId && !s.lost.isDone()) {
                return s;
            }
        }
        return null;
    }

    /** One etcd lease shared by every lock of one lease-time class, kept alive while the backend lives. */
    private final class Session {
        final long ttlSeconds;
        final long leaseId;
        final CompletableFuture<LossReason> lost = new CompletableFuture<>();
        /**
         * The monotonic time until which etcd keeps the lease even if no keep-alive arrives from now on and
         * the leader's clock runs fast within the drift factor ({@link #keptUntil}).
         */
        volatile long deadline;

        Session(long ttlSeconds, long leaseId, long deadline) {
            this.ttlSeconds = ttlSeconds;
            this.leaseId = leaseId;
            this.deadline = deadline;
        }

        long period() {
            return TimeUnit.SECONDS.toNanos(ttlSeconds) / 4;
        }

        void scheduleKeepAlive(long delayNanos) {
            if (lost.isDone() || closed.get()) {
                return;
            }
            try {
                runtime.scheduler().schedule(this::keepAlive, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                end(LossReason.RENEWAL_FAILED);
            }
        }

        private void keepAlive() {
            if (lost.isDone() || closed.get()) {
                return;
            }
            long sentAt = now();
            CompletableFuture<LeaseKeepAliveResponse> reply;
            try {
                reply = client.getLeaseClient().keepAliveOnce(leaseId);
            } catch (RuntimeException e) {
                afterFailure(e);
                return;
            }
            reply.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).whenComplete((r, e) -> {
                if (e == null && r.getTTL() > 0) {
                    deadline = Math.max(deadline, keptUntil(sentAt, r.getTTL(), driftFactor));
                    scheduleKeepAlive(period());
                } else if (e == null || EtcdErrors.isLeaseNotFound(e)) {
                    log.warn("The session lease {} on etcd at {} is gone (expired or revoked)", leaseId, where);
                    end(LossReason.SESSION_EXPIRED);
                } else {
                    afterFailure(e);
                }
            });
        }

        /** One keep-alive outside the schedule, to learn at once whether etcd still has the lease. */
        void probe() {
            client.getLeaseClient()
                    .keepAliveOnce(leaseId)
                    .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                    .whenComplete((r, e) -> {
                        if ((e == null && r.getTTL() <= 0) || (e != null && EtcdErrors.isLeaseNotFound(e))) {
                            end(LossReason.SESSION_EXPIRED);
                        }
                    });
        }

        private void afterFailure(Throwable e) {
            long left = deadline - now();
            if (left <= 0) {
                log.warn(
                        "Keeping the session lease {} on etcd at {} alive failed until it ran out: {}",
                        leaseId,
                        where,
                        e);
                end(LossReason.SESSION_EXPIRED);
                janitor.revokeLease(leaseId); // if etcd still has it, end it as soon as it answers
            } else {
                scheduleKeepAlive(Math.max(TimeUnit.MILLISECONDS.toNanos(20), Math.min(period(), left / 4)));
            }
        }

        /** Ends the session here: every lock held through it is lost. */
        void end(LossReason reason) {
            if (!lost.complete(reason)) {
                return;
            }
            sessions.remove(ttlSeconds, this);
            for (Held h : List.copyOf(held.values())) {
                if (h.session == this) {
                    forget(h);
                    h.lose(reason);
                }
            }
        }
    }

    // ------------------------------------------------------------------ held locks

    /** A granted lock, its session and its validity as the client tracks it. */
    private final class Held {
        final Handle handle;
        final CompletableFuture<LossReason> loss = new CompletableFuture<>();
        volatile Session session;
        volatile long validUntil;
        /** The tick of {@link #expiries} that times this grant's end, or {@link #NOT_TIMED}. */
        volatile long timedTick = NOT_TIMED;

        Held(Handle handle, Session session, long validUntil) {
            this.handle = handle;
            this.session = session;
            this.validUntil = validUntil;
        }

        void lose(LossReason reason) {
            // Loss callbacks are user code: never on the scheduler or on jetcd's threads.
            try {
                runtime.renewalExecutor().execute(() -> loss.complete(reason));
            } catch (RejectedExecutionException e) {
                loss.complete(reason);
            }
        }
    }

    /** No tick times a grant's end. */
    private static final long NOT_TIMED = Long.MIN_VALUE;

    /**
     * Makes sure a tick at or before the end of {@code h}'s validity is pending. A renewal (which only
     * moves the end later) finds one and does nothing: when that tick fires and validity is left, {@link
     * #expire} times the rest.
     */
    private void scheduleExpiry(Held h) {
        long timed = h.timedTick;
        if (timed != NOT_TIMED && timed <= Math.floorDiv(h.validUntil, ExpiryTicks.TICK_NANOS) + 1) {
            return;
        }
        try {
            h.timedTick = expiries.add(h, h.validUntil);
        } catch (RejectedExecutionException e) {
            h.timedTick = NOT_TIMED;
        }
        if (timed != NOT_TIMED) {
            expiries.remove(h, timed);
        }
    }

    /** At the end of a grant's validity without renewal: free the lock on etcd (asynchronously). */
    private void expire(Held h, long tick) {
        if (h.timedTick == tick) {
            h.timedTick = NOT_TIMED;
        }
        long left = h.validUntil - now();
        if (held.get(h.handle.key()) != h) {
            return;
        }
        if (left > 0) {
            scheduleExpiry(h);
            return;
        }
        forget(h);
        EtcdJanitor.Leftover leftover = leftover(h.handle);
        removeKey(leftover).orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).whenComplete((r, e) -> {
            if (e != null) {
                janitor.removeKey(leftover);
            }
        });
    }

    private void forget(Held h) {
        held.remove(h.handle.key(), h);
        long timed = h.timedTick;
        if (timed != NOT_TIMED) {
            expiries.remove(h, timed);
        }
    }

    /** The grant whose handle is {@code handle}: not a later grant that reuses its key. */
    private @Nullable Held heldFor(Handle handle) {
        Held h = held.get(handle.key());
        return h != null && h.handle.revision() == handle.revision() ? h : null;
    }

    /** What the janitor must delete if this grant's key cannot be deleted now. */
    private static EtcdJanitor.Leftover leftover(Handle handle) {
        return new EtcdJanitor.Leftover(
                handle.name(), handle.ownerToken(), handle.key(), handle.revision(), null, handle.slot());
    }

    /** The key an attempt queued (or may have queued): recognised by its value, the revision being unknown. */
    private static EtcdJanitor.Leftover leftover(Queued entry, String ownerToken) {
        return new EtcdJanitor.Leftover(entry.name(), ownerToken, entry.key(), 0, entry.value(), entry.slot());
    }

    /**
     * Deletes a queue key, only while it is this attempt's ({@link EtcdJanitor.Leftover}); completes
     * normally once etcd answered (the key is gone or is not this attempt's), and then gives its slot
     * back.
     */
    private CompletableFuture<TxnResponse> removeKey(EtcdJanitor.Leftover leftover) {
        String token = leftover.ownerToken();
        @Nullable Op tombstone = fence.tombstone(leftover.name(), token);
        CompletableFuture<TxnResponse> removed;
        if (tombstone == null) {
            removed = deleteKey(leftover, null);
        } else {
            // An acquire of this token went unanswered: write its tombstone in the same transaction, so
            // the late acquire cannot put the key back.
            removed = deleteKey(leftover, tombstone)
                    .thenApply(reply -> {
                        fence.fenced(token);
                        scheduleTombstoneRemoval(leftover.name(), token);
                        return reply;
                    })
                    .exceptionallyCompose(e -> {
                        if (!EtcdErrors.isLeaseNotFound(e)) {
                            return CompletableFuture.failedFuture(e);
                        }
                        // The lease the late acquire would put its key on is gone: it can only fail.
                        fence.fenced(token);
                        return deleteKey(leftover, null);
                    });
        }
        if (leftover.slot() < 0) {
            return removed;
        }
        return removed.thenApply(reply -> {
            Queued entry = queued.get(token);
            if (entry != null && entry.slot() == leftover.slot()) {
                queued.remove(token, entry);
            }
            slots.free(leftover.name(), leftover.slot(), token);
            return reply;
        });
    }

    private CompletableFuture<TxnResponse> deleteKey(EtcdJanitor.Leftover leftover, @Nullable Op tombstone) {
        io.etcd.jetcd.Txn txn = kv.txn();
        if (leftover.revision() != 0) {
            txn = txn.If(new Cmp(leftover.key(), Cmp.Op.EQUAL, CmpTarget.createRevision(leftover.revision())));
        } else if (leftover.value() != null) {
            txn = txn.If(new Cmp(leftover.key(), Cmp.Op.EQUAL, CmpTarget.value(leftover.value())));
        }
        if (tombstone == null) {
            return txn.Then(Op.delete(leftover.key(), DeleteOption.DEFAULT)).commit();
        }
        return txn.Then(Op.delete(leftover.key(), DeleteOption.DEFAULT), tombstone)
                .Else(tombstone)
                .commit();
    }

    private void scheduleTombstoneRemoval(String name, String ownerToken) {
        EtcdJanitor.Leftover tombstone =
                new EtcdJanitor.Leftover(name, ownerToken, keys.tombstone(name, ownerToken), 0, null, -1);
        try {
            runtime.scheduler()
                    .schedule(() -> janitor.removeKey(tombstone), LateAcquireFence.KEEP_MINUTES, TimeUnit.MINUTES);
        } catch (RejectedExecutionException e) {
            // shutting down: the tombstone goes with its session lease
        }
    }

    // ------------------------------------------------------------------ helpers

    private <T> T await(CompletableFuture<T> future, String what) {
        try {
            return awaitRaw(future, what);
        } catch (EtcdErrors.LeaseNotFound e) {
            // A session lease ended under us: find out which, and let the caller retry on a new one.
            for (Session s : List.copyOf(sessions.values())) {
                s.probe();
            }
            throw sessionEnded(what, e);
        }
    }

    /** Like {@link #await} but lets {@link EtcdErrors.LeaseNotFound} through to callers that know the lease. */
    private <T> T awaitRaw(CompletableFuture<T> future, String what) {
        return EtcdErrors.await(future, timeout, where, what);
    }

    private BackendUnavailableException sessionEnded(String what, Throwable cause) {
        return new BackendUnavailableException(
                what + " failed: a session lease on etcd at " + where + " has ended", cause, true);
    }

    private long now() {
        return runtime.clock().nanoTime();
    }
}
