package io.lockstep.redlock.internal;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.LockRuntime;
import io.lockstep.LossReason;
import io.lockstep.MonotonicClock;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.redlock.RedlockOptions;
import io.lockstep.redlock.internal.Replies.Reply;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.Grant;
import io.lockstep.spi.LockBackend;
import io.lockstep.spi.ReleaseWatch;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.util.Pool;

/**
 * Redlock over N independent Redis nodes, with fenced quorums.
 *
 * <p>Acquire: one round sends the {@link Scripts#ACQUIRE fenced acquire} to every node at once, each
 * with a short timeout, and stops as soon as a quorum granted. The grant is valid for
 * {@code TTL − (TTL × driftFactor + 2 ms)} counted from when the request was sent (the lease
 * machinery subtracts the elapsed time; this backend refuses a grant whose validity already ran out
 * while it waited). A round that fails frees the key on every node that granted or did not answer. A
 * stale fence proposal is retried at once with the greatest counter + 1; a split vote after a random
 * pause of about a round trip; a lock held by another quorum returns busy with a random retry delay.
 * Extend only counts when a quorum confirms; a renewal that finds the quorum gone completes the lease's
 * loss with {@link LossReason#QUORUM_LOST}.
 *
 * <p>Each round writes a value of its own (owner token, colon, round number), so a release that
 * arrives late at a slow node can never delete a later round's key. Thread-safe.
 */
public final class RedlockBackend implements LockBackend<RedlockHandle> {

    /** The provider name and URI scheme. */
    public static final String NAME = "redlock";

    /** Beside each lock key; lock names have no control characters, so no lock key can be a fence key. */
    static final String FENCE_SUFFIX = "\u0000fence";

    /** After the key prefix: the channel the release script publishes released lock keys on. */
    static final String RELEASE_CHANNEL = "\u0000lockstep:released";

    private static final Logger log = LoggerFactory.getLogger(RedlockBackend.class);
    private static final Duration FIXED_DRIFT = Duration.ofMillis(2);
    private static final int MAX_ROUNDS = 8;
    /** Added to the node timeout for a request's deadline on the node: clocks are read at different moments. */
    private static final long LATE_SLACK_MILLIS = 10;
    /** A held lock whose quorum of keys ends within this is waited for inside one attempt. */
    private static final long EXPIRING_HOLD_MILLIS = 25;

    private static final int MAX_FENCE_HINTS = 10_000;
    private static final int MAX_IN_FLIGHT_PER_NODE = 32;
    /** How long a background read of a reply nobody waits for may take before the connection is dropped. */
    private static final int DRAIN_TIMEOUT_MILLIS = 5_000;

    private static final ProviderInfo INFO = new ProviderInfo(
            NAME,
            StrengthTier.QUORUM,
            EnumSet.of(Capability.FENCING, Capability.LEASE_EXPIRY, Capability.EXTEND, Capability.NOTIFIED_WAIT));

    /**
     * A node to run on.
     *
     * @param address host and port, for messages and logs
     * @param pool its connection pool
     * @param ownsPool whether closing the backend closes the pool
     */
    public record NodeSpec(String address, Pool<Jedis> pool, boolean ownsPool) {}

    private final List<Node> nodes;
    private final int quorum;
    private final RedlockOptions options;
    private final MonotonicClock clock;
    private final ExecutorService executor;
    private final Map<String, Long> fenceHints = new ConcurrentHashMap<>();
    private final AtomicLong rounds = new AtomicLong();
    private final AtomicLong longestLeaseNanos = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final String description;
    private final ReleaseNotifier notifier;

    /**
     * A backend over {@code specs}.
     *
     * @throws IllegalArgumentException for no nodes, duplicate nodes or a quorum outside [N/2+1, N]
     */
    public RedlockBackend(List<NodeSpec> specs, RedlockOptions options, LockRuntime runtime) {
        this.options = options;
        this.clock = runtime.clock();
        validate(specs);
        int n = specs.size();
        this.quorum = options.quorum().orElse(n / 2 + 1);
        if (quorum < n / 2 + 1 || quorum > n) {
            throw new IllegalArgumentException(
                    "quorum must be between " + (n / 2 + 1) + " and " + n + " for " + n + " nodes, was " + quorum);
        }
        if (n % 2 == 0) {
            log.warn(
                    "Redlock over an even number of nodes ({}) needs {} of them and tolerates no more failures than {}"
                            + " nodes would; use an odd number",
                    n,
                    quorum,
                    n - 1);
        }
        List<Node> built = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            NodeSpec spec = specs.get(i);
            built.add(new Node(
                    i,
                    spec.address(),
                    spec.pool(),
                    spec.ownsPool(),
                    clock,
                    options.persistentNodes(),
                    this::quarantineNanos,
                    MAX_IN_FLIGHT_PER_NODE));
        }
        this.nodes = List.copyOf(built);
        this.description = NAME + "[" + nodes.stream().map(Node::address).collect(Collectors.joining(", ")) + "]";
        AtomicInteger threads = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                n, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), runnable -> {
                    Thread thread = new Thread(runnable, "lockstep-redlock-" + threads.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        this.executor = pool;
        this.notifier = new ReleaseNotifier(nodes, options.keyPrefix() + RELEASE_CHANNEL);
    }

    private static void validate(List<NodeSpec> specs) {
        if (specs == null || specs.isEmpty()) {
            throw new IllegalArgumentException("nodes must not be empty: Redlock needs at least one Redis node");
        }
        Set<String> addresses = new HashSet<>();
        Map<Object, Boolean> pools = new IdentityHashMap<>();
        for (NodeSpec spec : specs) {
            String address = spec.address().toLowerCase(Locale.ROOT);
            if (!addresses.add(address)) {
                throw new IllegalArgumentException("nodes must be distinct; '" + spec.address() + "' appears twice");
            }
            if (pools.put(spec.pool(), Boolean.TRUE) != null) {
                throw new IllegalArgumentException(
                        "nodes must be distinct; the pool for '" + spec.address() + "' is given twice");
            }
        }
    }

    @Override
    public ProviderInfo info() {
        return INFO;
    }

    /** The number of grants a lock needs. */
    public int quorum() {
        return quorum;
    }

    /** The nodes' addresses, in order. */
    public List<String> addresses() {
        return nodes.stream().map(Node::address).toList();
    }

    /** Whether node {@code index} is left out of quorums now after a restart. */
    public boolean isQuarantined(int index) {
        return nodes.get(index).isQuarantined();
    }

    @Override
    public Attempt<RedlockHandle> tryLock(String name, String ownerToken, Duration leaseTime) {
        long entry = clock.nanoTime();
        Duration validity = validity(leaseTime);
        noteLeaseTime(leaseTime);
        String lockKey = options.keyPrefix() + name;
        String fenceKey = lockKey + FENCE_SUFFIX;
        String ttl = Long.toString(Math.max(1, leaseTime.toMillis()));
        long timeout = options.nodeTimeoutFor(leaseTime).toNanos();
        long proposal = fenceHints.getOrDefault(name, 0L) + 1;
        long budgetMillis = TimeUnit.NANOSECONDS.toMillis(timeout) + LATE_SLACK_MILLIS;
        for (int round = 1; ; round++) {
            String value = ownerToken + ":" + rounds.incrementAndGet();
            String fence = Long.toString(proposal);
            long roundStart = System.nanoTime();
            List<@Nullable Reply<AcquireReply>> replies = fanOut(
                    nodes,
                    new Command(
                            Scripts.ACQUIRE,
                            List.of(lockKey, fenceKey),
                            node -> List.of(value, ttl, fence, Long.toString(node.deadline(budgetMillis)))),
                    RedlockBackend::parseAcquireReply,
                    r -> Replies.count(r, a -> a.kind() == AcquireReply.Kind.GRANTED) >= quorum,
                    roundStart + timeout);
            AcquireTally tally = AcquireTally.decide(values(replies), quorum, proposal);
            long elapsed = clock.nanoTime() - entry;
            if (tally.outcome() == AcquireTally.Outcome.GRANTED && elapsed < validity.toNanos()) {
                rememberFence(name, proposal);
                RedlockHandle handle = new RedlockHandle(name, lockKey, value, proposal, leaseTime, nodes.size());
                return Attempt.granted(new Grant<>(handle, OptionalLong.of(proposal), validity, handle.loss()));
            }
            // Not ours: free the key on every node that granted or did not answer (a late grant included).
            releaseAfterFailedRound(lockKey, value, replies, timeout);
            rememberFence(name, tally.maxCounter());
            long roundNanos = System.nanoTime() - roundStart;
            switch (tally.outcome()) {
                case UNREACHABLE ->
                    throw new BackendUnavailableException(
                            unreachableMessage("lock '" + name + "'", replies, timeout), null, true);
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
                    if (round < MAX_ROUNDS) {
                        proposal = tally.maxCounter() + 1;
                        continue;
                    }
                    return Attempt.busy(retryDelay(-1));
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

    @Override
    public Optional<Duration> extend(RedlockHandle handle, Duration leaseTime) {
        long start = clock.nanoTime();
        // A renewal capped by maxHold may ask for less than the drift allowance: the keys get that much,
        // the lease no validity at all (it ends now, as the cap says), never an error.
        Duration validity = validityOrZero(leaseTime);
        noteLeaseTime(leaseTime);
        String ttl = Long.toString(Math.max(1, leaseTime.toMillis()));
        long timeout = options.nodeTimeoutFor(leaseTime).toNanos();
        List<@Nullable Reply<Long>> replies = fanOut(
                nodes,
                new Command(Scripts.EXTEND, List.of(handle.lockKey()), node -> List.of(handle.value(), ttl)),
                (node, reply) -> toLong(reply),
                r -> Replies.count(r, v -> v == 1L) >= quorum,
                System.nanoTime() + timeout);
        int extended = Replies.count(replies, v -> v == 1L);
        int unknown = unknownNotRestarted(replies);
        long elapsed = clock.nanoTime() - start;
        if (extended >= quorum) {
            if (elapsed < validity.toNanos() || validity.isZero()) {
                handle.leaseTime(leaseTime);
                return Optional.of(validity);
            }
            lose(handle, LossReason.EXPIRED, "a quorum confirmed the extension only after its validity ran out");
            return Optional.empty();
        }
        if (extended + unknown < quorum) {
            lose(
                    handle,
                    LossReason.QUORUM_LOST,
                    "only " + extended + " of " + nodes.size() + " nodes still hold it; " + quorum + " are needed");
            return Optional.empty();
        }
        throw new BackendUnavailableException(
                "could not extend lock '" + handle.name() + "' on a quorum of " + description + ": confirmed by "
                        + extended + ", " + quorum + " needed; " + failures(replies, timeout),
                null,
                true);
    }

    @Override
    public boolean release(RedlockHandle handle) {
        List<Node> targets =
                nodes.stream().filter(n -> !handle.isReleasedOn(n.index())).toList();
        long timeout = options.nodeTimeoutFor(handle.leaseTime()).toNanos();
        int before = handle.releasedCount();
        List<@Nullable Reply<Long>> replies = fanOut(
                targets,
                new Command(
                        Scripts.RELEASE,
                        List.of(handle.lockKey()),
                        node -> List.of(handle.value(), notifier.channel())),
                (node, reply) -> {
                    long deleted = toLong(reply);
                    if (deleted == 1L) {
                        handle.markReleasedOn(node.index());
                    }
                    return deleted;
                },
                r -> before + Replies.count(r, v -> v == 1L) >= quorum,
                System.nanoTime() + timeout);
        int released = handle.releasedCount();
        if (released >= quorum) {
            return true;
        }
        int unknown = 0;
        for (Node node : targets) {
            Reply<Long> reply = replies.get(node.index());
            if ((reply == null || reply.value() == null) && !isRestartFailure(reply)) {
                unknown++;
            }
        }
        if (released + unknown >= quorum) {
            throw new BackendUnavailableException(
                    "could not release lock '" + handle.name() + "' on a quorum of " + description + ": released on "
                            + released + ", " + quorum + " needed; " + failures(replies, timeout),
                    null,
                    true);
        }
        return false;
    }

    @Override
    public void abandon(String name, String ownerToken) {
        try {
            String lockKey = options.keyPrefix() + name;
            inBackground(new Command(
                    Scripts.ABANDON, List.of(lockKey), node -> List.of(ownerToken + ":", notifier.channel())));
        } catch (RuntimeException e) {
            log.debug("Abandoning lock '{}' failed", name, e);
        }
    }

    @Override
    public ReleaseWatch watch(String name) {
        return notifier.watch(options.keyPrefix() + name);
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            notifier.close();
            executor.shutdown();
            for (Node node : nodes) {
                try {
                    node.close();
                } catch (RuntimeException e) {
                    log.debug("Closing the pool of {} failed", node.address(), e);
                }
            }
        }
    }

    @Override
    public String toString() {
        return description;
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

    private void lose(RedlockHandle handle, LossReason reason, String why) {
        log.warn("Lock '{}' on {} is lost ({}): {}", handle.name(), description, reason, why);
        // Completing the loss first makes the lease report this reason rather than a bare NOT_HELD.
        handle.loss().complete(reason);
        inBackground(new Command(
                Scripts.RELEASE, List.of(handle.lockKey()), node -> List.of(handle.value(), notifier.channel())));
    }

    private void releaseAfterFailedRound(
            String lockKey, String value, List<@Nullable Reply<AcquireReply>> replies, long timeoutNanos) {
        List<Node> targets = new ArrayList<>();
        for (Node node : nodes) {
            Reply<AcquireReply> reply = replies.get(node.index());
            AcquireReply answer = reply == null ? null : reply.value();
            if (answer == null || answer.kind() == AcquireReply.Kind.GRANTED) {
                targets.add(node);
            }
        }
        if (targets.isEmpty()) {
            return;
        }
        fanOut(
                targets,
                new Command(Scripts.RELEASE, List.of(lockKey), node -> List.of(value, notifier.channel())),
                (node, reply) -> toLong(reply),
                r -> false,
                System.nanoTime() + timeoutNanos);
    }

    /** A script with its keys, and its arguments for a node (computed once the node's connection is checked). */
    private record Command(Scripts.Script script, List<String> keys, Function<Node, List<String>> args) {}

    /** Turns a node's raw reply into a value, or throws {@link Node.NodeFailure}. */
    @FunctionalInterface
    private interface Parser<T> {
        T parse(Node node, Object reply);
    }

    private record Sent(Node node, Jedis jedis, List<String> args) {}

    /**
     * Runs {@code command} on every node of {@code targets} in parallel from the calling thread: every
     * request is written first (so all nodes work at once), then the replies are read, nodes that
     * failed lately last. Reading stops at {@code deadlineNanos}; once {@code enough} holds, nodes that
     * failed lately are not waited for (their replies are read in the background). Nodes not in
     * {@code targets} answer "not asked".
     *
     * @return one entry per node: a value, a failure, or null for no answer in time
     */
    private <T> List<@Nullable Reply<T>> fanOut(
            List<Node> targets,
            Command command,
            Parser<T> parser,
            Predicate<List<@Nullable Reply<T>>> enough,
            long deadlineNanos) {
        Collector<T> replies = new Collector<>(nodes.size());
        if (targets.size() < nodes.size()) {
            for (Node node : nodes) {
                if (!targets.contains(node)) {
                    replies.put(node.index(), Reply.failed(NOT_ASKED));
                }
            }
        }
        List<Node> order = new ArrayList<>(targets);
        order.sort(Comparator.comparing(Node::isSuspect)); // stable: healthy nodes first, in their order
        List<Sent> sent = new ArrayList<>(order.size());
        for (Node node : order) {
            if (node.isSuspect() || !node.hasIdleConnection()) {
                // Connecting (and checking a new connection) may block: never on the caller's thread.
                inWorker(node, command, parser, replies, deadlineNanos);
                continue;
            }
            Jedis jedis;
            try {
                jedis = node.borrow();
            } catch (Node.NodeFailure e) {
                replies.put(node.index(), Reply.failed(e.getMessage()));
                node.failed();
                continue;
            }
            try {
                List<String> args = command.args().apply(node);
                Node.send(jedis, command.script(), command.keys(), args);
                sent.add(new Sent(node, jedis, args));
            } catch (RuntimeException e) {
                jedis.getConnection().setBroken();
                node.giveBack(jedis);
                replies.put(node.index(), Reply.failed(Node.describe(e)));
                node.failed();
            }
        }
        for (Sent s : sent) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0 && enough.test(replies.snapshot())) {
                drainLater(s, command);
                continue;
            }
            // Past the deadline a node still gets a millisecond: its reply is usually there already (it
            // was sent with the others) and only the reading waited on a slower node.
            int millis = left <= 0 ? 1 : (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left + 999_999));
            replies.put(s.node().index(), receive(s, command, parser, millis));
        }
        return replies.await(enough, deadlineNanos);
    }

    /** Borrows, sends and reads on a worker thread; the reply counts if it comes by the deadline. */
    private <T> void inWorker(Node node, Command command, Parser<T> parser, Collector<T> replies, long deadlineNanos) {
        try {
            executor.execute(() -> {
                Jedis jedis;
                try {
                    jedis = node.borrow();
                } catch (Node.NodeFailure e) {
                    node.failed();
                    replies.put(node.index(), Reply.failed(e.getMessage()));
                    return;
                }
                List<String> args;
                try {
                    args = command.args().apply(node);
                    Node.send(jedis, command.script(), command.keys(), args);
                } catch (RuntimeException e) {
                    jedis.getConnection().setBroken();
                    node.giveBack(jedis);
                    node.failed();
                    replies.put(node.index(), Reply.failed(Node.describe(e)));
                    return;
                }
                long left = deadlineNanos - System.nanoTime();
                int millis = (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left + 999_999));
                replies.put(node.index(), receive(new Sent(node, jedis, args), command, parser, millis));
            });
        } catch (RejectedExecutionException e) {
            replies.put(node.index(), Reply.failed("the provider is closed"));
        }
    }

    /** Reads one reply within {@code millis} and gives the connection back; null if none came in time. */
    private static <T> @Nullable Reply<T> receive(Sent s, Command command, Parser<T> parser, int millis) {
        try {
            Object raw = Node.receive(s.jedis(), command.script(), command.keys(), s.args(), millis);
            s.node().answered();
            return Reply.of(parser.parse(s.node(), raw));
        } catch (Node.NodeFailure e) {
            return Reply.failed(e.getMessage());
        } catch (JedisDataException e) {
            s.node().answered(); // the node answered, with an error
            return Reply.failed(e.getMessage());
        } catch (RuntimeException e) {
            s.node().failed();
            return isTimeout(e) ? null : Reply.failed(Node.describe(e));
        } finally {
            s.node().giveBack(s.jedis());
        }
    }

    /** The replies of one fan-out as they come in, from the caller and from workers. Thread-safe. */
    private static final class Collector<T> {
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition changed = lock.newCondition();
        private final List<@Nullable Reply<T>> replies;
        private final boolean[] done;
        private int answered;

        Collector(int nodes) {
            this.replies = new ArrayList<>(Collections.nCopies(nodes, null));
            this.done = new boolean[nodes];
        }

        /** Records node {@code index}'s reply (null: none in time); the first record for a node wins. */
        void put(int index, @Nullable Reply<T> reply) {
            lock.lock();
            try {
                if (!done[index]) {
                    done[index] = true;
                    replies.set(index, reply);
                    answered++;
                    changed.signalAll();
                }
            } finally {
                lock.unlock();
            }
        }

        List<@Nullable Reply<T>> snapshot() {
            lock.lock();
            try {
                return new ArrayList<>(replies);
            } finally {
                lock.unlock();
            }
        }

        /** Waits until every node is done, {@code enough} holds, or the deadline passes. */
        List<@Nullable Reply<T>> await(Predicate<List<@Nullable Reply<T>>> enough, long deadlineNanos) {
            lock.lock();
            try {
                while (answered < done.length && !enough.test(replies)) {
                    long left = deadlineNanos - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    try {
                        changed.awaitNanos(left);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
                List<@Nullable Reply<T>> out = new ArrayList<>(replies);
                // Frozen now: a worker's late reply must not change what the caller decided on.
                Arrays.fill(done, true);
                answered = done.length;
                return out;
            } finally {
                lock.unlock();
            }
        }
    }

    /** Reads a reply nobody waits for any more, so the connection can go back to the pool. */
    private void drainLater(Sent s, Command command) {
        try {
            executor.execute(() -> {
                try {
                    Node.receive(s.jedis(), command.script(), command.keys(), s.args(), DRAIN_TIMEOUT_MILLIS);
                    s.node().answered();
                } catch (RuntimeException e) {
                    s.node().failed();
                } finally {
                    s.node().giveBack(s.jedis());
                }
            });
        } catch (RejectedExecutionException e) {
            s.jedis().getConnection().setBroken(); // a reply is still due on it: never reuse it
            s.node().giveBack(s.jedis());
        }
    }

    /** Runs {@code command} on every node without waiting (cleanup nobody waits for). */
    private void inBackground(Command command) {
        try {
            executor.execute(() -> fanOut(
                    nodes,
                    command,
                    (node, reply) -> reply,
                    r -> false,
                    System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DRAIN_TIMEOUT_MILLIS)));
        } catch (RejectedExecutionException e) {
            log.debug("Provider closed; cleanup on {} skipped", description);
        }
    }

    private static boolean isTimeout(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    private static final String NOT_ASKED = "not asked";

    private static boolean isRestartFailure(@Nullable Reply<?> reply) {
        return reply != null && reply.failure() != null && reply.failure().startsWith(Node.RESTARTED);
    }

    private static <T> int unknownNotRestarted(List<@Nullable Reply<T>> replies) {
        int n = 0;
        for (Reply<T> reply : replies) {
            if ((reply == null || reply.value() == null) && !isRestartFailure(reply)) {
                n++;
            }
        }
        return n;
    }

    private String unreachableMessage(String what, List<? extends @Nullable Reply<?>> replies, long timeoutNanos) {
        return "Redlock could not reach a quorum (" + quorum + " of " + nodes.size() + " nodes) for " + what
                + "; unreachable: " + failures(replies, timeoutNanos);
    }

    private String failures(List<? extends @Nullable Reply<?>> replies, long timeoutNanos) {
        List<String> out = new ArrayList<>();
        for (Node node : nodes) {
            Reply<?> reply = replies.get(node.index());
            if (reply == null) {
                out.add(node.address() + " (no answer within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms)");
            } else if (reply.value() == null && !NOT_ASKED.equals(reply.failure())) {
                out.add(node.address() + " (" + reply.failure() + ")");
            }
        }
        return out.isEmpty() ? "none" : String.join(", ", out);
    }

    private static List<@Nullable AcquireReply> values(List<@Nullable Reply<AcquireReply>> replies) {
        List<@Nullable AcquireReply> out = new ArrayList<>(replies.size());
        for (Reply<AcquireReply> reply : replies) {
            out.add(reply == null ? null : reply.value());
        }
        return out;
    }

    private static AcquireReply parseAcquireReply(Node node, Object reply) {
        if (reply instanceof List<?> list && list.size() == 3 && toLong(list.get(0)) == 3) {
            node.refusedAsLate(toLong(list.get(2)), 0);
            throw new Node.NodeFailure("refused the request as late: it arrived after its deadline", null);
        }
        return parseAcquire(reply);
    }

    static AcquireReply parseAcquire(Object reply) {
        if (!(reply instanceof List<?> list) || list.size() < 2) {
            throw new IllegalStateException("unexpected reply to the acquire script: " + reply);
        }
        long code = toLong(list.get(0));
        long counter = toLong(list.get(1));
        if (code == 1) {
            return AcquireReply.granted(counter);
        }
        if (code == 2) {
            return AcquireReply.stale(counter);
        }
        Object holder = list.size() > 3 ? list.get(3) : "";
        String hash = holder instanceof byte[] bytes
                ? new String(bytes, java.nio.charset.StandardCharsets.US_ASCII)
                : String.valueOf(holder);
        return AcquireReply.held(counter, list.size() > 2 ? toLong(list.get(2)) : -1, hash);
    }

    static long toLong(Object reply) {
        if (reply instanceof Long l) {
            return l;
        }
        throw new IllegalStateException("unexpected reply: " + reply);
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

    private long quarantineNanos() {
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
