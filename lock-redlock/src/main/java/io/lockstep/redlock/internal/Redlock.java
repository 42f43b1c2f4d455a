package io.lockstep.redlock.internal;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LockState;
import io.lockstep.LossReason;
import io.lockstep.MonotonicClock;
import io.lockstep.redlock.RedlockOptions;
import io.lockstep.redlock.internal.FanOut.Request;
import io.lockstep.redlock.internal.Replies.Reply;
import io.lockstep.redlock.internal.Replies.Status;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.Grant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redlock algorithm with fenced quorums, as the module README states it: the decisions of
 * acquire, extend, release and cleanup over the replies of {@link FanOut}, with validity, fence
 * proposals and retry delays. Sending to the nodes, deadlines and background retries are the
 * fan-out's; what one node does is {@link Scripts}'; the decision after one acquire round is {@link
 * AcquireTally}'s. Every round writes a value of its own (owner token, colon, round number), so a
 * release that reaches a slow node late never deletes a later round's key.
 *
 * <p>What a request may have written on a node that did not answer is freed only once the request can
 * no longer run there (its deadline passed on the node), since a cleanup that ran first would find
 * nothing and the late grant would stay; and it is retried in the background until answered or until
 * the keys would have expired anyway. Thread-safe.
 */
final class Redlock {

    private static final Logger log = LoggerFactory.getLogger(Redlock.class);
    private static final Duration FIXED_DRIFT = Duration.ofMillis(2);
    private static final int MAX_ROUNDS = 8;
    /** A held lock whose quorum of keys ends within this is waited for inside one attempt. */
    private static final long EXPIRING_HOLD_MILLIS = 25;

    private static final int MAX_FENCE_HINTS = 10_000;
    private static final int MAX_LEFTOVERS = 10_000;
    /** How long an abandon (cleanup after an unknown outcome) keeps trying nodes that do not answer. */
    private static final long ABANDON_RETRY_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final List<Node> nodes;
    private final int quorum;
    private final RedlockOptions options;
    private final MonotonicClock clock;
    private final FanOut fanOut;
    private final String channel;
    private final String description;
    private final Map<String, Long> fenceHints = new ConcurrentHashMap<>();
    /** Values of rounds that did not win but may still hold keys, by the hash a held reply names them with. */
    private final Map<String, Leftover> leftovers = new ConcurrentHashMap<>();

    private final AtomicLong rounds = new AtomicLong();
    private final AtomicLong longestLeaseNanos = new AtomicLong();

    /** The algorithm over {@code nodes} needing {@code quorum} grants; releases notify on {@code channel}. */
    Redlock(
            List<Node> nodes,
            int quorum,
            RedlockOptions options,
            MonotonicClock clock,
            FanOut fanOut,
            String channel,
            String description) {
        this.nodes = nodes;
        this.quorum = quorum;
        this.options = options;
        this.clock = clock;
        this.fanOut = fanOut;
        this.channel = channel;
        this.description = description;
    }

    /**
     * One attempt at the lock: rounds until granted, held, or out of rounds; throws if unreachable. Each
     * round's value is the owner token, a colon and the round number, then a space and {@code holder}
     * (the {@linkplain io.lockstep.spi.HolderText holder's text}) unless it is empty, so that {@link
     * #inspect} can say who holds the lock.
     */
    Attempt<RedlockHandle> tryLock(String name, String ownerToken, Duration leaseTime, String holder) {
        long entry = clock.nanoTime();
        Duration validity = validity(leaseTime);
        noteLeaseTime(leaseTime);
        String lockKey = options.keyPrefix() + name;
        List<String> keys = List.of(lockKey, lockKey + RedlockBackend.FENCE_SUFFIX);
        String ttl = Long.toString(Math.max(1, leaseTime.toMillis()));
        long timeout = options.nodeTimeoutFor(leaseTime).toNanos();
        long proposal = fenceHints.getOrDefault(name, 0L) + 1;
        for (int round = 1; ; round++) {
            String value = ownerToken + ":" + rounds.incrementAndGet() + (holder.isEmpty() ? "" : " " + holder);
            String fence = Long.toString(proposal);
            long roundStart = System.nanoTime();
            FanOut.Result<AcquireReply> result = fanOut.call(
                    nodes,
                    new Request(Scripts.ACQUIRE, keys, (node, deadlineMillis) -> {
                        // The deadline was taken before this node's connection was set up, however long that took.
                        return List.of(value, ttl, fence, Long.toString(node.onNodeClock(deadlineMillis)));
                    }),
                    (node, reply) -> AcquireReply.parse(node, reply, roundStart + timeout),
                    r -> Replies.count(r, a -> a.kind() == AcquireReply.Kind.GRANTED) >= quorum,
                    timeout);
            List<Reply<AcquireReply>> replies = result.replies();
            AcquireTally tally = AcquireTally.decide(Replies.values(replies), quorum, proposal);
            long keysEnd = System.nanoTime() + leaseTime.toNanos();
            long elapsed = clock.nanoTime() - entry;
            if (tally.outcome() == AcquireTally.Outcome.GRANTED && elapsed < validity.toNanos()) {
                rememberFence(name, proposal);
                boolean[] unsettled = new boolean[nodes.size()];
                boolean[] granted = new boolean[nodes.size()];
                for (Node node : nodes) {
                    Reply<AcquireReply> reply = replies.get(node.index());
                    unsettled[node.index()] = reply.mayHaveRun();
                    granted[node.index()] =
                            reply.value() != null && reply.value().kind() == AcquireReply.Kind.GRANTED;
                }
                RedlockHandle handle = new RedlockHandle(
                        name,
                        lockKey,
                        value,
                        proposal,
                        leaseTime,
                        granted,
                        unsettled,
                        roundStart + validity.toNanos(),
                        result.settledAtNanos(),
                        keysEnd);
                return Attempt.granted(new Grant<>(handle, OptionalLong.of(proposal), validity, handle.loss()));
            }
            Map<Node, String> ownKeys =
                    tally.outcome() == AcquireTally.Outcome.HELD || tally.outcome() == AcquireTally.Outcome.CONTESTED
                            ? earlierRoundsOf(ownerToken, replies)
                            : Map.of();
            cleanUpRound(lockKey, ownerToken, value, result, timeout, keysEnd);
            rememberFence(name, tally.maxCounter());
            if (!ownKeys.isEmpty()) {
                // The keys in the way are this attempt's own, from a round whose replies were lost before the
                // caller retried: not another holder. They ran, so they can be freed now; then try again.
                freeEarlierRounds(lockKey, ownKeys, timeout);
                if (round >= MAX_ROUNDS) {
                    throw new BackendUnavailableException(
                            "Redlock could not free lock '" + name + "' of this attempt's own earlier round on "
                                    + ownKeys.size() + " node(s) whose replies were lost",
                            null,
                            true);
                }
                continue;
            }
            long roundNanos = System.nanoTime() - roundStart;
            switch (tally.outcome()) {
                case UNREACHABLE -> {
                    if (Replies.count(replies, Status.ANSWERED) + Replies.count(replies, Status.OVERLOADED) >= quorum) {
                        // This client is overloaded, not the nodes: wait in line as for a held lock.
                        return Attempt.busy(retryDelay(-1));
                    }
                    throw new BackendUnavailableException(
                            "Redlock could not reach a quorum (" + quorum + " of " + nodes.size() + " nodes) for lock '"
                                    + name + "'; unreachable: " + Replies.failures(nodes, replies),
                            null,
                            true);
                }
                case HELD -> {
                    // A holder whose keys end within moments has usually seen its own validity end already
                    // (it ends a drift allowance before the keys): look again then rather than report busy.
                    long endsIn = tally.retryAfterMillis();
                    if (endsIn < 0 || endsIn > EXPIRING_HOLD_MILLIS || round >= MAX_ROUNDS) {
                        return Attempt.busy(retryDelay(endsIn));
                    }
                    if (!pause(TimeUnit.MILLISECONDS.toNanos(endsIn + 1))) {
                        return Attempt.busy(Duration.ZERO);
                    }
                }
                case STALE -> {
                    if (round >= MAX_ROUNDS) {
                        return Attempt.busy(retryDelay(-1));
                    }
                    proposal = tally.maxCounter() + 1;
                }
                default -> {
                    // A split vote, grants that came too late, or a holder's keys expiring node by node.
                    if (round >= MAX_ROUNDS || elapsed > validity.toNanos() / 2) {
                        return Attempt.busy(retryDelay(-1));
                    }
                    if (!pause(splitVotePause(roundNanos))) {
                        return Attempt.busy(Duration.ZERO);
                    }
                }
            }
        }
    }

    /**
     * Frees what a round that did not win may have written: at once where it was granted, and where no
     * answer came only once the request can no longer run there (a cleanup that ran first would find
     * nothing, and the late grant would stay); again in the background until answered or until the keys
     * would have expired anyway. The cleanup sends no release notice: it frees no holder's lock, and the
     * notice would wake this very waiter into another round at once.
     */
    private void cleanUpRound(
            String lockKey,
            String ownerToken,
            String value,
            FanOut.Result<AcquireReply> result,
            long timeout,
            long keysEnd) {
        List<Node> granted = new ArrayList<>();
        List<Node> unsettled = new ArrayList<>();
        for (Node node : nodes) {
            Reply<AcquireReply> reply = result.replies().get(node.index());
            AcquireReply answer = reply.value();
            if (answer != null && answer.kind() == AcquireReply.Kind.GRANTED) {
                granted.add(node);
            } else if (reply.mayHaveRun()) {
                unsettled.add(node);
            }
        }
        if (!granted.isEmpty() || !unsettled.isEmpty()) {
            rememberLeftover(new Leftover(ownerToken, value, keysEnd));
        }
        Request cleanup = new Request(Scripts.CLEANUP, List.of(lockKey), (node, deadline) -> List.of(value));
        if (!granted.isEmpty()) {
            List<Reply<Long>> replies = fanOut.call(granted, cleanup, Replies::asLong, r -> false, timeout)
                    .replies();
            List<Node> again = granted.stream()
                    .filter(node -> replies.get(node.index()).unknown())
                    .toList();
            fanOut.eventually(again, cleanup, Replies::asLong, timeout, System.nanoTime(), keysEnd);
        }
        fanOut.eventually(unsettled, cleanup, Replies::asLong, timeout, result.settledAtNanos(), keysEnd);
    }

    /** Extends on a quorum; empty (and the lease lost) if the quorum is gone. */
    Optional<Duration> extend(RedlockHandle handle, Duration leaseTime) {
        long start = clock.nanoTime();
        long sent = System.nanoTime();
        // A renewal capped by maxHold may ask for less than the drift allowance: the keys get that much,
        // the lease no validity at all (it ends now, as the cap says), never an error.
        Duration validity = validityOrZero(leaseTime);
        noteLeaseTime(leaseTime);
        String ttl = Long.toString(Math.max(1, leaseTime.toMillis()));
        long timeout = options.nodeTimeoutFor(leaseTime).toNanos();
        List<Reply<Long>> replies = fanOut.call(
                        nodes,
                        new Request(Scripts.EXTEND, List.of(handle.lockKey()), (n, d) -> List.of(handle.value(), ttl)),
                        Replies::asLong,
                        r -> Replies.count(r, v -> v == 1L) >= quorum,
                        timeout)
                .replies();
        handle.keysMayLastUntil(System.nanoTime() + leaseTime.toNanos());
        int extended = Replies.count(replies, v -> v == 1L);
        long elapsed = clock.nanoTime() - start;
        if (extended >= quorum) {
            if (elapsed < validity.toNanos() || validity.isZero()) {
                handle.leaseTime(leaseTime);
                handle.extendedOn(holding(replies, v -> v == 1L), sent + validity.toNanos());
                return Optional.of(validity);
            }
            lose(handle, LossReason.EXPIRED, "a quorum confirmed the extension only after its validity ran out");
            return Optional.empty();
        }
        if (extended + Replies.unknown(replies) < quorum) {
            lose(
                    handle,
                    LossReason.QUORUM_LOST,
                    "only " + extended + " of " + nodes.size() + " nodes still hold it; " + quorum + " are needed");
            return Optional.empty();
        }
        throw new BackendUnavailableException(
                "could not extend lock '" + handle.name() + "' on a quorum of " + description + ": confirmed by "
                        + extended + ", " + quorum + " needed; " + Replies.failures(nodes, replies),
                null,
                true);
    }

    /** Keys per {@link Scripts#EXTEND_MANY} call: a script runs atomically on its node, so keep it short. */
    static final int MAX_RENEWAL_BATCH = 500;

    /**
     * {@link #extend} for many leases in one round trip per node: each node runs one {@link
     * Scripts#EXTEND_MANY}, and each lease is judged on its own, exactly as {@code extend} would judge it
     * (extended where a quorum extended it within its validity, lost where too few nodes still hold it).
     * If any lease's outcome is unknown (too many nodes did not answer), nothing is decided and the whole
     * batch throws a transient failure, to be retried (extending is idempotent).
     */
    List<Optional<Duration>> extendAll(List<RedlockHandle> handles, List<Duration> leaseTimes) {
        long start = clock.nanoTime();
        long sent = System.nanoTime();
        int size = handles.size();
        List<String> keys = new ArrayList<>(size);
        List<String> args = new ArrayList<>(2 * size);
        long timeout = 0;
        for (int i = 0; i < size; i++) {
            Duration leaseTime = leaseTimes.get(i);
            noteLeaseTime(leaseTime);
            keys.add(handles.get(i).lockKey());
            args.add(handles.get(i).value());
            args.add(Long.toString(Math.max(1, leaseTime.toMillis())));
            timeout = Math.max(timeout, options.nodeTimeoutFor(leaseTime).toNanos());
        }
        FanOut.Parser<List<Long>> parser = (node, reply) -> {
            if (!(reply instanceof List<?> list) || list.size() != size) {
                throw new Node.NodeFailure("extending " + size + " locks: the node answered " + reply, null);
            }
            List<Long> out = new ArrayList<>(size);
            for (Object value : list) {
                out.add(Replies.asLong(value));
            }
            return out;
        };
        List<Reply<List<Long>>> replies = fanOut.call(
                        nodes,
                        new Request(Scripts.EXTEND_MANY, keys, (n, d) -> args),
                        parser,
                        r -> everyLeaseHasQuorum(r, size),
                        timeout)
                .replies();
        int unknown = Replies.unknown(replies);
        int[] extended = new int[size];
        for (Reply<List<Long>> reply : replies) {
            List<Long> values = reply.value();
            if (values != null) {
                for (int i = 0; i < size; i++) {
                    if (values.get(i) == 1L) {
                        extended[i]++;
                    }
                }
            }
        }
        for (int i = 0; i < size; i++) {
            if (extended[i] < quorum && extended[i] + unknown >= quorum) {
                throw new BackendUnavailableException(
                        "could not extend " + size + " locks on a quorum of " + description + " (lock '"
                                + handles.get(i).name() + "' confirmed by " + extended[i] + ", " + quorum
                                + " needed); " + Replies.failures(nodes, replies),
                        null,
                        true);
            }
        }
        long keysEnd = System.nanoTime();
        long elapsed = clock.nanoTime() - start;
        List<Optional<Duration>> results = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            RedlockHandle handle = handles.get(i);
            Duration leaseTime = leaseTimes.get(i);
            Duration validity = validityOrZero(leaseTime);
            handle.keysMayLastUntil(keysEnd + leaseTime.toNanos());
            if (extended[i] >= quorum) {
                if (elapsed < validity.toNanos() || validity.isZero()) {
                    handle.leaseTime(leaseTime);
                    int index = i;
                    handle.extendedOn(holding(replies, values -> values.get(index) == 1L), sent + validity.toNanos());
                    results.add(Optional.of(validity));
                } else {
                    lose(
                            handle,
                            LossReason.EXPIRED,
                            "a quorum confirmed the extension only after its validity ran out");
                    results.add(Optional.empty());
                }
            } else {
                lose(
                        handle,
                        LossReason.QUORUM_LOST,
                        "only " + extended[i] + " of " + nodes.size() + " nodes still hold it; " + quorum
                                + " are needed");
                results.add(Optional.empty());
            }
        }
        return results;
    }

    /** The nodes whose answer {@code holds}. */
    private static <T> boolean[] holding(List<Reply<T>> replies, Predicate<T> holds) {
        boolean[] out = new boolean[replies.size()];
        for (int i = 0; i < out.length; i++) {
            T value = replies.get(i).value();
            out[i] = value != null && holds.test(value);
        }
        return out;
    }

    private boolean everyLeaseHasQuorum(List<Reply<List<Long>>> replies, int size) {
        for (int i = 0; i < size; i++) {
            int index = i;
            if (Replies.count(replies, values -> values.get(index) == 1L) < quorum) {
                return false;
            }
        }
        return true;
    }

    /** Releases on every node; true once a quorum deleted. */
    boolean release(RedlockHandle handle) {
        long now = System.nanoTime();
        long timeout = options.nodeTimeoutFor(handle.leaseTime()).toNanos();
        handle.releaseBegins(now, timeout);
        List<Node> targets = new ArrayList<>();
        List<Node> unsettled = new ArrayList<>();
        for (Node node : nodes) {
            if (!handle.isReleasedOn(node.index())) {
                (handle.isUnsettledOn(node.index(), now) ? unsettled : targets).add(node);
            }
        }
        Request release = releaseRequest(handle);
        FanOut.Parser<Long> parser = releaseParser(handle);
        int before = handle.releasedCount();
        List<Reply<Long>> replies = fanOut.call(
                        targets, release, parser, r -> before + Replies.count(r, v -> v == 1L) >= quorum, timeout)
                .replies();
        // Where the grant request may still run, release only once it cannot (or the release could come
        // first); what did not answer now is released again until the keys would have expired anyway.
        fanOut.eventually(unsettled, release, parser, timeout, handle.settledAtNanos(), handle.keysEndNanos());
        List<Node> again =
                targets.stream().filter(n -> replies.get(n.index()).unknown()).toList();
        fanOut.eventually(again, release, parser, timeout, now, handle.keysEndNanos());
        int released = handle.releasedCount();
        if (released >= quorum) {
            return true;
        }
        if (released + again.size() + unsettled.size() >= quorum) {
            throw new BackendUnavailableException(
                    "could not release lock '" + handle.name() + "' on a quorum of " + description + ": released on "
                            + released + ", " + quorum + " needed; " + Replies.failures(nodes, replies)
                            + "; retried in the background until its keys expire",
                    null,
                    true);
        }
        return false;
    }

    /**
     * What the nodes say of lock {@code name} now ({@link InspectTally}): one read on every node, within
     * the node timeout. Throws when too few nodes answered to tell held from free.
     */
    LockState inspect(String name) {
        String lockKey = options.keyPrefix() + name;
        long timeout = options.nodeTimeoutFor(Duration.ofDays(1)).toNanos();
        FanOut.Result<InspectTally.NodeView> result = fanOut.call(
                nodes,
                new Request(
                        Scripts.INSPECT, List.of(lockKey, lockKey + RedlockBackend.FENCE_SUFFIX), (n, d) -> List.of()),
                InspectTally.NodeView::parse,
                r -> false,
                timeout);
        return InspectTally.decide(result.replies(), quorum)
                .orElseThrow(() -> new BackendUnavailableException(
                        "Redlock could not tell whether lock '" + name + "' is held: too few of " + nodes.size()
                                + " nodes answered (a quorum is " + quorum + "); unreachable: "
                                + Replies.failures(nodes, result.replies()),
                        null,
                        true));
    }

    /** Frees, after any round of {@code ownerToken} can still run, whatever its rounds left. */
    void abandon(String name, String ownerToken) {
        String lockKey = options.keyPrefix() + name;
        long timeout = options.nodeTimeoutFor(Duration.ofDays(1)).toNanos();
        // After any round of this token can still run on a node (its deadline), so it cannot overtake one.
        long notBefore = System.nanoTime() + timeout + TimeUnit.MILLISECONDS.toNanos(2 * FanOut.LATE_SLACK_MILLIS);
        fanOut.eventually(
                nodes,
                new Request(Scripts.ABANDON, List.of(lockKey), (n, d) -> List.of(ownerToken + ":", channel)),
                Replies::asLong,
                timeout,
                notBefore,
                notBefore + ABANDON_RETRY_NANOS);
    }

    private void lose(RedlockHandle handle, LossReason reason, String why) {
        log.warn("Lock '{}' on {} is lost ({}): {}", handle.name(), description, reason, why);
        // Completing the loss first makes the lease report this reason rather than a bare NOT_HELD.
        handle.loss().complete(reason);
        fanOut.eventually(
                nodes.stream().filter(n -> !handle.isReleasedOn(n.index())).toList(),
                releaseRequest(handle),
                releaseParser(handle),
                options.nodeTimeoutFor(handle.leaseTime()).toNanos(),
                Math.max(System.nanoTime(), handle.settledAtNanos()),
                handle.keysEndNanos());
    }

    private Request releaseRequest(RedlockHandle handle) {
        return new Request(Scripts.RELEASE, List.of(handle.lockKey()), (n, d) -> List.of(handle.value(), channel));
    }

    /**
     * Marks the nodes where the release deleted the key, and, for a release begun while the grant was
     * valid, the nodes that granted and no longer have the key ({@link RedlockHandle#goneMeansReleasedOn}):
     * an earlier release of this grant whose reply was lost deleted it. Without that, a retried release
     * whose first try ran unseen on a majority answered "was not held" (R6, 2026-11-27).
     */
    private static FanOut.Parser<Long> releaseParser(RedlockHandle handle) {
        return (node, reply) -> {
            long deleted = Replies.asLong(node, reply);
            if (deleted == 1L || (deleted == 0L && handle.goneMeansReleasedOn(node.index()))) {
                handle.markReleasedOn(node.index());
            }
            return deleted;
        };
    }

    /** {@code leaseTime − (leaseTime × driftFactor + 2 ms)}, counted from when the request is sent. */
    Duration validity(Duration leaseTime) {
        Duration drift = Duration.ofNanos(Math.round(leaseTime.toNanos() * options.driftFactor()))
                .plus(FIXED_DRIFT);
        Duration validity = leaseTime.minus(drift);
        if (validity.isNegative() || validity.isZero()) {
            throw new IllegalArgumentException("leaseTime must be longer than Redlock's clock drift allowance of "
                    + drift.toMillis() + " ms, was " + leaseTime);
        }
        return validity;
    }

    private Duration validityOrZero(Duration leaseTime) {
        try {
            return validity(leaseTime);
        } catch (IllegalArgumentException tooShort) {
            return Duration.ZERO;
        }
    }

    /**
     * A losing round's value that may still hold keys until {@code keysEndNanos}, remembered so that a
     * retry of the same attempt (a transient failure, often lost replies) knows its own keys when a node
     * reports them as the holder, instead of taking them for another holder and reporting the free lock
     * busy.
     */
    private record Leftover(String ownerToken, String value, long keysEndNanos) {}

    private void rememberLeftover(Leftover leftover) {
        if (leftovers.size() >= MAX_LEFTOVERS) {
            long now = System.nanoTime();
            leftovers.values().removeIf(l -> now - l.keysEndNanos() > 0);
            if (leftovers.size() >= MAX_LEFTOVERS) {
                leftovers.clear(); // only a shortcut: a forgotten leftover is waited out as before
            }
        }
        leftovers.put(Scripts.holderHash(leftover.value()), leftover);
    }

    /** The nodes whose held reply names an earlier round of the attempt {@code ownerToken}, with that round's value. */
    private Map<Node, String> earlierRoundsOf(String ownerToken, List<Reply<AcquireReply>> replies) {
        Map<Node, String> own = new HashMap<>();
        for (Node node : nodes) {
            AcquireReply answer = replies.get(node.index()).value();
            if (answer != null && answer.kind() == AcquireReply.Kind.HELD) {
                Leftover leftover = leftovers.get(answer.holder());
                if (leftover != null && leftover.ownerToken().equals(ownerToken)) {
                    own.put(node, leftover.value());
                }
            }
        }
        return own;
    }

    /**
     * Deletes each node's key if it still holds that node's earlier-round value. Safe at once: the node
     * answered with the value, so the request that wrote it has run there and cannot write it again.
     */
    private void freeEarlierRounds(String lockKey, Map<Node, String> ownKeys, long timeout) {
        Request cleanup =
                new Request(Scripts.CLEANUP, List.of(lockKey), (node, deadline) -> List.of(ownKeys.get(node)));
        fanOut.call(List.copyOf(ownKeys.keySet()), cleanup, Replies::asLong, r -> false, timeout);
    }

    private void rememberFence(String name, long fence) {
        if (fenceHints.size() > MAX_FENCE_HINTS) {
            fenceHints.clear(); // only a hint: a stale one costs one more round
        }
        fenceHints.merge(name, fence, Math::max);
    }

    private void noteLeaseTime(Duration leaseTime) {
        longestLeaseNanos.accumulateAndGet(leaseTime.toNanos(), Math::max);
    }

    /** How long a restarted node sits out: the longest lease time any client uses, or this one used. */
    long quarantineNanos() {
        return Math.max(options.maxLeaseTime().toNanos(), longestLeaseNanos.get());
    }

    private Duration retryDelay(long hintMillis) {
        long max = options.retryDelay().toNanos();
        long nanos = ThreadLocalRandom.current().nextLong(max / 2, max + 1);
        if (hintMillis >= 0) {
            nanos = Math.min(nanos, TimeUnit.MILLISECONDS.toNanos(hintMillis + 1));
        }
        return Duration.ofNanos(Math.max(nanos, TimeUnit.MILLISECONDS.toNanos(1)));
    }

    private long splitVotePause(long roundNanos) {
        long bound =
                Math.min(options.retryDelay().toNanos(), Math.max(TimeUnit.MILLISECONDS.toNanos(1), 2 * roundNanos));
        return ThreadLocalRandom.current().nextLong(bound + 1);
    }

    private static boolean pause(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
