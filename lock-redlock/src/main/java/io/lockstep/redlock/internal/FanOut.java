package io.lockstep.redlock.internal;

import io.lockstep.redlock.internal.Replies.Reply;
import io.lockstep.redlock.internal.Replies.Status;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * The transport under Redlock: sends one script to N nodes at once, collects the replies within a
 * deadline, reads the replies nobody waits for any more in the background, and runs cleanups later
 * and again until they are answered. It knows nothing of locks or quorums. Thread-safe.
 *
 * <p>Every call on a node first takes one of the node's in-flight slots ({@link Node#takeSlot}), in
 * node order so that callers never wait on one another in a cycle: a healthy node's slot is waited
 * for, up to {@link #SLOT_WAIT_MILLIS}, in line, holding the earlier nodes' slots only for the first
 * {@link #HOLDING_WAIT_MILLIS} of it, so a slow node's line never holds up calls to the others; a node
 * that failed lately is not waited for. Only then does the fan-out's clock start, so time spent in
 * line never makes a request late.
 */
final class FanOut implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FanOut.class);

    /** Added to the timeout for a request's deadline on the node: the clocks are read at different moments. */
    static final long LATE_SLACK_MILLIS = 10;
    /** How long a call waits in line for a slot of a healthy node before counting it as locally overloaded. */
    static final long SLOT_WAIT_MILLIS = 1_000;
    /**
     * How long a call waits for a busy node's slot while it holds other nodes' slots: a healthy node's
     * call comes back sooner. Longer, and the node may be slow: the call waits for it holding nothing.
     */
    static final long HOLDING_WAIT_MILLIS = 50;
    /** How long a background read of a reply nobody waits for may take before the connection is dropped. */
    private static final int DRAIN_TIMEOUT_MILLIS = 5_000;

    private static final long SETTLE_MARGIN_MILLIS = 3;
    private static final long FIRST_RETRY_MILLIS = 50;
    private static final long MAX_RETRY_MILLIS = 1_000;

    /**
     * A script, its keys, and its arguments for a node, computed once that node's connection is
     * borrowed from the fan-out's deadline on this JVM's wall clock (taken before any connection set-up).
     */
    record Request(Scripts.Script script, List<String> keys, Args args) {}

    /** The arguments of a request on {@code node}, given the fan-out's local wall-clock deadline. */
    @FunctionalInterface
    interface Args {
        List<String> forNode(Node node, long deadlineMillis);
    }

    /** Turns a node's raw reply into a value, or throws {@link Node.NodeFailure} for a refusal. */
    @FunctionalInterface
    interface Parser<T> {
        T parse(Node node, Object reply);
    }

    /**
     * The replies of one fan-out, in node order, and the moment (of {@link System#nanoTime()}) from which
     * no request of it can still run on a node: a request carrying a deadline is refused after it.
     */
    record Result<T>(List<Reply<T>> replies, long settledAtNanos) {}

    private record Sent(Node node, Jedis jedis, List<String> args) {}

    /** Threads for background retries ({@link #eventually}); their calls wait for workers, never the reverse. */
    static final int RETRY_THREADS = 2;

    private final List<Node> nodes;
    /** Runs calls that hold a node's slot: at most the sum of the nodes' slots run at once. */
    private final ExecutorService executor;
    /** Runs background retries, which make calls of their own: kept apart so they never starve workers. */
    private final ExecutorService retries;

    private final ScheduledExecutorService timer;

    /** Background tasks scheduled or running ({@link #later}); {@link #close(long)} waits for none. */
    private final AtomicInteger pending = new AtomicInteger();

    private volatile boolean closing;
    /** When closing, the {@link System#nanoTime()} after which no background work is started. */
    private volatile long closeDeadline;

    FanOut(List<Node> nodes) {
        this.nodes = nodes;
        // Every task on the worker pool holds one of a node's in-flight slots (taken before it is
        // submitted, given back when it ends), so more threads than slots could never be busy; a slow or
        // dead node therefore never grows threads, and a task beyond that only queues for an instant.
        int workers = nodes.stream().mapToInt(Node::maxInFlight).sum();
        this.executor = fixedPool(workers, "lockstep-redlock-");
        this.retries = fixedPool(RETRY_THREADS, "lockstep-redlock-retry-");
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "lockstep-redlock-timer");
            thread.setDaemon(true);
            return thread;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        this.timer = scheduler;
    }

    private static ExecutorService fixedPool(int threads, String prefix) {
        AtomicInteger counter = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                threads, threads, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), runnable -> {
                    Thread thread = new Thread(runnable, prefix + counter.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /** The most threads this fan-out can run at once: its workers, its retries and its timer. */
    int maxThreads() {
        return ((ThreadPoolExecutor) executor).getMaximumPoolSize()
                + ((ThreadPoolExecutor) retries).getMaximumPoolSize()
                + 1;
    }

    /**
     * Runs {@code request} on every node of {@code targets} in parallel from the calling thread: every
     * request is written first (so all nodes work at once), then the replies are read, nodes that
     * failed lately last. Nodes with no connection ready, or that failed lately, are served by worker
     * threads (connecting may block). Reading stops {@code timeoutNanos} after the slots were taken;
     * once {@code enough} holds, nodes that failed lately are not waited for (their replies are read in
     * the background). Replies that come later never change the result.
     */
    <T> Result<T> call(
            List<Node> targets,
            Request request,
            Parser<T> parser,
            Predicate<List<Reply<T>>> enough,
            long timeoutNanos) {
        Collector<T> replies = new Collector<>(nodes.size(), timeoutNanos);
        List<Node> holding = takeSlots(targets, replies);
        long start = System.nanoTime();
        long deadlineNanos = start + timeoutNanos;
        long budgetMillis = TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + LATE_SLACK_MILLIS;
        long deadlineMillis = System.currentTimeMillis() + budgetMillis;
        List<Node> order = new ArrayList<>(holding);
        order.sort(Comparator.comparing(Node::isSuspect)); // stable: healthy nodes first, in their order
        List<Sent> sent = new ArrayList<>(order.size());
        for (Node node : order) {
            if (node.isSuspect() || !node.hasIdleConnection()) {
                inWorker(node, request, parser, replies, deadlineNanos, deadlineMillis);
            } else {
                Sent s = borrowAndSend(node, request, replies, deadlineNanos, deadlineMillis);
                if (s != null) {
                    sent.add(s);
                }
            }
        }
        for (Sent s : sent) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0 && enough.test(replies.snapshot())) {
                drainLater(s, request);
                continue;
            }
            // Past the deadline a node still gets a millisecond: its reply is usually there already (it
            // was sent with the others) and only the reading waited on a slower node.
            replies.put(s.node().index(), receive(s, request, parser, millisLeft(left), timeoutNanos));
        }
        List<Reply<T>> out = replies.await(enough, deadlineNanos);
        // Nodes refuse what they run after deadlineMillis here (Node#onNodeClock); 3 ms cover the rounding
        // of both clocks to whole milliseconds.
        long settledAt = start + TimeUnit.MILLISECONDS.toNanos(budgetMillis + SETTLE_MARGIN_MILLIS);
        return new Result<>(out, settledAt);
    }

    /**
     * Runs {@code request} on {@code targets} in the background from {@code notBeforeNanos} on, and
     * again on every node that did not answer, with growing pauses, until {@code untilNanos}.
     * {@code parser} sees every answer.
     */
    <T> void eventually(
            List<Node> targets,
            Request request,
            Parser<T> parser,
            long timeoutNanos,
            long notBeforeNanos,
            long untilNanos) {
        if (!targets.isEmpty()) {
            later(
                    notBeforeNanos - System.nanoTime(),
                    () -> retry(targets, request, parser, timeoutNanos, untilNanos, FIRST_RETRY_MILLIS));
        }
    }

    private <T> void retry(
            List<Node> targets,
            Request request,
            Parser<T> parser,
            long timeoutNanos,
            long untilNanos,
            long pauseMillis) {
        List<Reply<T>> replies =
                call(targets, request, parser, r -> false, timeoutNanos).replies();
        List<Node> left = targets.stream()
                .filter(node -> {
                    Reply<T> reply = replies.get(node.index());
                    return !reply.answered() && reply.status() != Status.RESTARTED;
                })
                .toList();
        long pause = TimeUnit.MILLISECONDS.toNanos(pauseMillis);
        if (!left.isEmpty() && System.nanoTime() + pause < untilNanos) {
            later(
                    pause,
                    () -> retry(
                            left,
                            request,
                            parser,
                            timeoutNanos,
                            untilNanos,
                            Math.min(2 * pauseMillis, MAX_RETRY_MILLIS)));
        } else if (!left.isEmpty()) {
            log.debug("Gave up {} on {}; what is left there ends by its TTL", request.script(), left);
        }
    }

    /**
     * Runs {@code task} on a retry thread after {@code delayNanos}, counted in {@link #pending} until it
     * ends. Once closing, work due after the close deadline is skipped: those keys end by their TTL.
     */
    private void later(long delayNanos, Runnable task) {
        if (closing && System.nanoTime() + Math.max(0, delayNanos) - closeDeadline > 0) {
            log.debug("Provider closed; background work due after its close grace skipped");
            return;
        }
        pending.incrementAndGet();
        Runnable counted = () -> {
            try {
                task.run();
            } finally {
                done();
            }
        };
        try {
            if (delayNanos <= 0) {
                retries.execute(counted);
            } else {
                timer.schedule(() -> inBackground(counted), delayNanos, TimeUnit.NANOSECONDS);
            }
        } catch (RejectedExecutionException e) {
            done();
            log.debug("Provider closed; background work skipped");
        }
    }

    private void inBackground(Runnable counted) {
        try {
            retries.execute(counted);
        } catch (RejectedExecutionException e) {
            done();
            log.debug("Provider closed; background work skipped");
        }
    }

    private void done() {
        if (pending.decrementAndGet() == 0) {
            synchronized (pending) {
                pending.notifyAll();
            }
        }
    }

    /** Background work scheduled or running: deferred releases and cleanups, and their retries. */
    int pending() {
        return pending.get();
    }

    /**
     * Closes with no grace: background work still pending is dropped (those keys end by their TTL).
     */
    @Override
    public void close() {
        close(0);
    }

    /**
     * Lets background work (a release or cleanup waiting for a round's deadline, and retries on nodes
     * that did not answer) go on for up to {@code graceNanos}, returning as soon as none is left, then
     * stops every thread. Work due after the grace is not started, and what is still pending then is
     * dropped: those keys end by their TTL. Returns within {@code graceNanos} (plus an instant).
     */
    void close(long graceNanos) {
        closeDeadline = System.nanoTime() + Math.max(0, graceNanos);
        closing = true;
        synchronized (pending) {
            long left;
            while (pending.get() > 0 && (left = closeDeadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(pending, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        int dropped = pending.get();
        if (dropped > 0) {
            log.debug(
                    "Provider closed with {} background release(s) or cleanup(s) unfinished; those keys end by their"
                            + " TTL",
                    dropped);
        }
        timer.shutdownNow();
        retries.shutdownNow();
        executor.shutdown();
    }

    /**
     * Takes a slot on each target; a target without one gets its reply here. Slots are taken in node
     * order, and a busy node is waited for while holding the earlier nodes' slots for at most {@link
     * #HOLDING_WAIT_MILLIS}: long enough for a healthy node's call to come back, and in node order, so
     * callers never wait on one another in a cycle. A node still busy after that may be slow: the caller
     * gives back every slot it holds and waits for that node alone, then takes the others again. So a
     * caller in line for a slow node never keeps the healthy nodes' slots from other callers (whose calls
     * to those nodes would fail OVERLOADED). Each healthy node is waited for up to {@link
     * #SLOT_WAIT_MILLIS} in all (a node still busy then is OVERLOADED); a node that failed lately is
     * never waited for.
     */
    private <T> List<Node> takeSlots(List<Node> targets, Collector<T> replies) {
        List<Node> wanted = new ArrayList<>(targets.size());
        for (Node node : nodes) {
            if (targets.contains(node)) {
                wanted.add(node);
            } else {
                replies.put(node.index(), Reply.failed(Status.NOT_ASKED, "not asked"));
            }
        }
        Line line = new Line(nodes.size());
        @Nullable Node waitedFor = null; // its slot was taken by waiting alone, and is held into the next pass
        pass:
        while (true) {
            List<Node> holding = new ArrayList<>(wanted.size());
            if (waitedFor != null) {
                holding.add(waitedFor); // first, so that giving back what this pass holds includes it
            }
            for (Iterator<Node> it = wanted.iterator(); it.hasNext(); ) {
                Node node = it.next();
                if (node == waitedFor) {
                    continue;
                }
                if (node.takeSlot(0)
                        || (!node.isSuspect() && line.take(node, TimeUnit.MILLISECONDS.toNanos(HOLDING_WAIT_MILLIS)))) {
                    holding.add(node);
                    continue;
                }
                if (node.isSuspect() || line.over(node)) {
                    it.remove();
                    replies.put(node.index(), noSlot(node));
                    continue;
                }
                for (Node held : holding) {
                    held.releaseSlot();
                }
                if (line.take(node, Long.MAX_VALUE)) {
                    waitedFor = node;
                } else {
                    waitedFor = null;
                    it.remove();
                    replies.put(node.index(), noSlot(node));
                }
                continue pass;
            }
            holding.sort(Comparator.comparingInt(Node::index));
            return holding;
        }
    }

    /**
     * The time one call has waited in line for each node's slot: up to {@link #SLOT_WAIT_MILLIS} per
     * node, counted only while waiting for that node (a wait for another node uses none of it).
     */
    private static final class Line {
        private final long[] waited;

        Line(int nodes) {
            waited = new long[nodes];
        }

        /** Takes a slot of {@code node}, waiting up to {@code maxNanos} and the node's time left in line. */
        boolean take(Node node, long maxNanos) {
            long wait = Math.min(maxNanos, leftNanos(node));
            if (wait <= 0) {
                return false;
            }
            long start = System.nanoTime();
            try {
                return node.takeSlot(wait);
            } finally {
                waited[node.index()] += System.nanoTime() - start;
            }
        }

        /** Whether the call has waited for {@code node} as long as it may. */
        boolean over(Node node) {
            return leftNanos(node) <= 0;
        }

        private long leftNanos(Node node) {
            return TimeUnit.MILLISECONDS.toNanos(SLOT_WAIT_MILLIS) - waited[node.index()];
        }
    }

    /** The reply of a target this call got no slot of. */
    private static <T> Reply<T> noSlot(Node node) {
        if (node.isSuspect()) {
            return Reply.failed(
                    Status.NOT_SENT, "not answering: " + node.maxInFlight() + " calls to it have not come back");
        }
        return Reply.failed(
                Status.OVERLOADED,
                "this client's " + node.maxInFlight() + " connection slots for it stayed busy for " + SLOT_WAIT_MILLIS
                        + " ms (see maxInFlight)");
    }

    /** Borrows a connection of a node whose slot is held, and writes the request; null if it failed. */
    private <T> @Nullable Sent borrowAndSend(
            Node node, Request request, Collector<T> replies, long deadlineNanos, long deadlineMillis) {
        Jedis jedis;
        try {
            jedis = node.borrow(deadlineNanos);
        } catch (Node.NodeFailure e) {
            String why = String.valueOf(e.getMessage());
            node.failed();
            replies.put(
                    node.index(),
                    Reply.failed(why.startsWith(Node.RESTARTED) ? Status.RESTARTED : Status.NOT_SENT, why));
            return null;
        }
        try {
            List<String> args = request.args().forNode(node, deadlineMillis);
            Node.send(jedis, request.script(), request.keys(), args);
            return new Sent(node, jedis, args);
        } catch (RuntimeException e) {
            jedis.getConnection().setBroken();
            node.giveBack(jedis);
            node.failed();
            replies.put(node.index(), Reply.failed(Status.BROKEN, Node.describe(e)));
            return null;
        }
    }

    /** Borrows, sends and reads on a worker thread; the reply counts if it comes by the deadline. */
    private <T> void inWorker(
            Node node,
            Request request,
            Parser<T> parser,
            Collector<T> replies,
            long deadlineNanos,
            long deadlineMillis) {
        try {
            executor.execute(() -> {
                Sent s = borrowAndSend(node, request, replies, deadlineNanos, deadlineMillis);
                if (s != null) {
                    long left = deadlineNanos - System.nanoTime();
                    replies.put(node.index(), receive(s, request, parser, millisLeft(left), replies.timeoutNanos));
                }
            });
        } catch (RejectedExecutionException e) {
            node.releaseSlot();
            replies.put(node.index(), Reply.failed(Status.NOT_SENT, "the provider is closed"));
        }
    }

    /** Reads one reply within {@code millis} and gives the connection back. */
    private static <T> Reply<T> receive(Sent s, Request request, Parser<T> parser, int millis, long timeoutNanos) {
        try {
            Object raw = Node.receive(s.jedis(), request.script(), request.keys(), s.args(), millis);
            s.node().answered();
            return Reply.of(parser.parse(s.node(), raw));
        } catch (Node.NodeFailure e) {
            return Reply.failed(Status.ERROR, String.valueOf(e.getMessage()));
        } catch (JedisDataException e) {
            s.node().answered(); // the node answered, with an error
            return Reply.failed(Status.ERROR, String.valueOf(e.getMessage()));
        } catch (RuntimeException e) {
            s.node().failed();
            return isTimeout(e) ? noAnswer(timeoutNanos) : Reply.failed(Status.BROKEN, Node.describe(e));
        } finally {
            s.node().giveBack(s.jedis());
        }
    }

    /** Reads a reply nobody waits for any more, so the connection can go back to the pool. */
    private void drainLater(Sent s, Request request) {
        try {
            executor.execute(() -> {
                try {
                    Node.receive(s.jedis(), request.script(), request.keys(), s.args(), DRAIN_TIMEOUT_MILLIS);
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

    private static int millisLeft(long leftNanos) {
        return leftNanos <= 0 ? 1 : (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(leftNanos + 999_999));
    }

    private static <T> Reply<T> noAnswer(long timeoutNanos) {
        return Reply.failed(
                Status.NO_ANSWER, "no answer within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
    }

    private static boolean isTimeout(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /** The replies of one fan-out as they come in, from the caller and from workers. Thread-safe. */
    private static final class Collector<T> {
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition changed = lock.newCondition();
        private final List<@Nullable Reply<T>> replies;
        private final boolean[] done;
        private final long timeoutNanos;
        private int answered;

        Collector(int nodes, long timeoutNanos) {
            this.replies = new ArrayList<>(java.util.Collections.nCopies(nodes, null));
            this.done = new boolean[nodes];
            this.timeoutNanos = timeoutNanos;
        }

        /** Records node {@code index}'s reply; the first record for a node wins. */
        void put(int index, Reply<T> reply) {
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

        List<Reply<T>> snapshot() {
            lock.lock();
            try {
                return complete();
            } finally {
                lock.unlock();
            }
        }

        /** Waits until every node is done, {@code enough} holds, or the deadline passes; then freezes. */
        List<Reply<T>> await(Predicate<List<Reply<T>>> enough, long deadlineNanos) {
            lock.lock();
            try {
                while (answered < done.length && !enough.test(complete())) {
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
                List<Reply<T>> out = complete();
                // Frozen now: a worker's late reply must not change what the caller decided on.
                Arrays.fill(done, true);
                answered = done.length;
                return out;
            } finally {
                lock.unlock();
            }
        }

        private List<Reply<T>> complete() {
            List<Reply<T>> out = new ArrayList<>(replies.size());
            for (Reply<T> reply : replies) {
                out.add(reply == null ? noAnswer(timeoutNanos) : reply);
            }
            return out;
        }
    }
}
