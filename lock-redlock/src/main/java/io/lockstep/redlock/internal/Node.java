package io.lockstep.redlock.internal;

import io.lockstep.MonotonicClock;
import io.lockstep.redlock.RedlockOptions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.util.Pool;

/**
 * One Redis node of the Redlock set: its pool, and what this client knows of it: the {@code run_id}
 * it last saw, and until when the node is left out of quorums after a restart.
 *
 * <p>Every new connection is checked before its first command: {@code INFO server} tells the
 * {@code run_id}; a changed one means the node restarted and lost what it kept in memory (lock keys
 * and fence counters), so it is quarantined for the longest lease time, as the spec's delayed restart
 * asks, unless it persists every write. A restart breaks every connection, so the check runs before
 * anything the restarted node says is counted. Thread-safe.
 */
final class Node {

    private static final Logger log = LoggerFactory.getLogger(Node.class);

    /** How the failure of a quarantined node's call begins: such a node surely lost the keys it had. */
    static final String RESTARTED = "restarted and left out of quorums";

    /** The in-flight cap over a pool without a size limit. */
    private static final int UNBOUNDED_POOL_CAP = 64;

    /** Thrown for a call that failed or was refused before reaching the node; the message says why. */
    static final class NodeFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NodeFailure(String message, @Nullable Throwable cause) {
            super(message, cause, false, false);
        }
    }

    private final int index;
    private final String address;
    private final Pool<Jedis> pool;
    private final boolean ownsPool;
    private final MonotonicClock clock;
    private final boolean declaredPersistent;
    private final LongSupplier quarantineNanos;
    private final int maxInFlight;
    /** One permit per call this client may have in flight on the node; fair, so callers queue in order. */
    private final Semaphore slots;

    private final Set<Jedis> checked = Collections.newSetFromMap(Collections.synchronizedMap(new WeakHashMap<>()));

    private volatile boolean suspect;
    private volatile long clockOffsetMillis;
    private volatile long clockUncertaintyMillis;
    private volatile boolean clockKnown;
    private @Nullable String runId;
    private long quarantinedUntil;
    private boolean quarantined;
    /** A restart was seen and whether the node kept its state is still being checked: no vote counts yet. */
    private boolean verdictPending;

    Node(
            int index,
            String address,
            Pool<Jedis> pool,
            boolean ownsPool,
            MonotonicClock clock,
            boolean declaredPersistent,
            LongSupplier quarantineNanos,
            int maxInFlight) {
        this.index = index;
        this.address = address;
        this.pool = pool;
        this.ownsPool = ownsPool;
        this.clock = clock;
        this.declaredPersistent = declaredPersistent;
        this.quarantineNanos = quarantineNanos;
        this.maxInFlight = maxInFlight;
        this.slots = new Semaphore(maxInFlight, true);
    }

    /**
     * The nodes of {@code specs}, in order, each with its in-flight cap.
     *
     * @throws IllegalArgumentException for no nodes, or a node or pool given twice
     */
    static List<Node> of(
            List<RedlockBackend.NodeSpec> specs,
            RedlockOptions options,
            MonotonicClock clock,
            LongSupplier quarantineNanos) {
        if (specs == null || specs.isEmpty()) {
            throw new IllegalArgumentException("nodes must not be empty: Redlock needs at least one Redis node");
        }
        Set<String> addresses = new HashSet<>();
        Map<Object, Boolean> pools = new IdentityHashMap<>();
        List<Node> nodes = new ArrayList<>(specs.size());
        for (RedlockBackend.NodeSpec spec : specs) {
            if (!addresses.add(spec.address().toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException("nodes must be distinct; '" + spec.address() + "' appears twice");
            }
            if (pools.put(spec.pool(), Boolean.TRUE) != null) {
                throw new IllegalArgumentException(
                        "nodes must be distinct; the pool for '" + spec.address() + "' is given twice");
            }
            int cap = inFlightCap(options.maxInFlight().orElse(0), spec.pool());
            nodes.add(new Node(
                    nodes.size(),
                    spec.address(),
                    spec.pool(),
                    spec.ownsPool(),
                    clock,
                    options.persistentNodes(),
                    quarantineNanos,
                    cap));
        }
        return List.copyOf(nodes);
    }

    /**
     * How many calls a client may have in flight on a node with {@code pool}: {@code configured} if
     * set, otherwise one less than the pool's size (one connection is kept for the release subscriber).
     */
    static int inFlightCap(int configured, Pool<Jedis> pool) {
        if (configured > 0) {
            return configured;
        }
        int total = pool.getMaxTotal();
        return total <= 0 ? UNBOUNDED_POOL_CAP : Math.max(1, total - 1);
    }

    int index() {
        return index;
    }

    String address() {
        return address;
    }

    /** Whether the node is left out of quorums now (after a restart), for tests and messages. */
    synchronized boolean isQuarantined() {
        return quarantined && clock.nanoTime() - quarantinedUntil < 0;
    }

    /** The {@code run_id} last seen, if any. */
    synchronized @Nullable String runId() {
        return runId;
    }

    /** The most calls this client has in flight on the node at once. */
    int maxInFlight() {
        return maxInFlight;
    }

    /**
     * Takes one of the node's in-flight slots, waiting up to {@code waitNanos} in line for one. Every
     * call on the node holds a slot from before it borrows a connection until it gives it back, so the
     * pool always has a connection for a slot holder. Fair, even with no wait: a free slot is not taken
     * past callers already in line for one.
     *
     * @return false if none came free in time
     */
    boolean takeSlot(long waitNanos) {
        try {
            return slots.tryAcquire(Math.max(0, waitNanos), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The in-flight slots free now (for tests). */
    int freeSlots() {
        return slots.availablePermits();
    }

    /** Gives back a slot taken with {@link #takeSlot} whose call never borrowed a connection. */
    void releaseSlot() {
        slots.release();
    }

    /**
     * Borrows a connection for a call that holds a slot: its {@code run_id} checked if it is new,
     * refused while the node is quarantined or the verdict on a restart is pending (waited for until
     * {@code deadlineNanos} of {@link System#nanoTime()}). On failure the slot is given back. The caller
     * gives the connection back with {@link #giveBack}.
     *
     * @throws NodeFailure if the node is quarantined or unreachable
     */
    Jedis borrow(long deadlineNanos) {
        Jedis jedis = null;
        try {
            jedis = pool.getResource();
            if (!checked.contains(jedis)) {
                checkRunId(jedis);
                measureClock(jedis);
                checked.add(jedis);
            }
            requireNotQuarantined(deadlineNanos);
            return jedis;
        } catch (RuntimeException e) {
            if (jedis != null) {
                jedis.close();
            }
            slots.release();
            if (e instanceof NodeFailure failure) {
                throw failure;
            }
            throw new NodeFailure(describe(e), e);
        }
    }

    /** The node's pool. */
    Pool<Jedis> pool() {
        return pool;
    }

    /** Whether the pool has a connection ready (borrowing it needs no network). */
    boolean hasIdleConnection() {
        return pool.getNumIdle() > 0;
    }

    /** Returns a borrowed connection and its slot. */
    void giveBack(Jedis jedis) {
        try {
            jedis.close();
        } finally {
            slots.release();
        }
    }

    /** Sends {@code script} on {@code jedis} without waiting for the reply (EVALSHA, flushed). */
    static void send(Jedis jedis, Scripts.Script script, List<String> keys, List<String> args) {
        Connection connection = jedis.getConnection();
        connection.sendCommand(command(Protocol.Command.EVALSHA, script.sha(), keys, args));
        connection.getMany(0); // flushes without reading
    }

    /**
     * Reads the reply to {@link #send} within {@code timeoutMillis}; on NOSCRIPT loads the script with
     * EVAL on the same connection. A timeout breaks the connection (it is then destroyed, never reused);
     * otherwise the connection goes back with the socket timeout it came with.
     */
    static Object receive(Jedis jedis, Scripts.Script script, List<String> keys, List<String> args, int timeoutMillis) {
        Connection connection = jedis.getConnection();
        // Jedis's setSoTimeout also replaces the timeout its rollbackTimeout restores, so the pool's own is
        // put back by hand: a connection of the caller's pool must not keep a Redlock read's deadline.
        int poolTimeout = connection.getSoTimeout();
        connection.setSoTimeout(Math.max(1, timeoutMillis));
        try {
            try {
                return connection.getOne();
            } catch (JedisNoScriptException e) {
                connection.sendCommand(command(Protocol.Command.EVAL, script.source(), keys, args));
                return connection.getOne();
            }
        } finally {
            if (!connection.isBroken()) {
                connection.setSoTimeout(poolTimeout);
            }
        }
    }

    private static CommandArguments command(
            Protocol.Command command, String scriptOrSha, List<String> keys, List<String> args) {
        CommandArguments arguments =
                new CommandArguments(command).add(scriptOrSha).add(keys.size());
        for (String key : keys) {
            arguments.key(key);
        }
        for (String arg : args) {
            arguments.add(arg);
        }
        return arguments;
    }

    /** Whether the node failed its last call: fan-outs read it last and never wait on it past a decision. */
    boolean isSuspect() {
        return suspect;
    }

    void answered() {
        suspect = false;
    }

    void failed() {
        suspect = true;
    }

    /**
     * {@code localMillis} (this JVM's wall clock) on the node's wall clock, less the uncertainty of the
     * measured offset between the clocks: the deadline a request carries. Whatever the true offset, the
     * node then refuses a request it runs after {@code localMillis} here, so a cleanup sent after that
     * instant can never be overtaken by it. The local deadline is taken before any connection is set up,
     * so a request whose set-up blocked (a paused node) is refused as late. Refusing early is always safe:
     * a wrong offset costs availability, never exclusion. 0 (no deadline) only while the offset was never
     * measured, which a borrowed connection rules out.
     */
    long onNodeClock(long localMillis) {
        if (!clockKnown) {
            return 0;
        }
        return localMillis + clockOffsetMillis - clockUncertaintyMillis;
    }

    /**
     * The node refused a request as late although its reply came back in time, at {@code nodeMillis} on
     * its clock: the measured offset is wrong (the clock was stepped). Take the offset from that answer.
     */
    void refusedInTime(long nodeMillis) {
        long offset = nodeMillis - System.currentTimeMillis();
        log.warn(
                "Redlock node {} refused a request as late that was not; its clock moved by {} ms against ours",
                address,
                offset - clockOffsetMillis);
        clockOffsetMillis = offset;
    }

    /** The offset from the best of three {@code TIME} round trips (the shortest bounds it tightest). */
    private void measureClock(Jedis jedis) {
        long bestRoundTrip = Long.MAX_VALUE;
        long bestOffset = 0;
        for (int i = 0; i < 3; i++) {
            long before = System.currentTimeMillis();
            List<String> time = jedis.time();
            long after = System.currentTimeMillis();
            if (after - before < bestRoundTrip) {
                long nodeMillis = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
                bestRoundTrip = after - before;
                bestOffset = nodeMillis - (before + after) / 2;
            }
        }
        clockOffsetMillis = bestOffset;
        clockUncertaintyMillis = bestRoundTrip / 2 + 1;
        clockKnown = true;
    }

    void close() {
        if (ownsPool) {
            try {
                pool.close();
            } catch (RuntimeException e) {
                log.debug("Closing the pool of {} failed", address, e);
            }
        }
    }

    private void requireNotQuarantined(long deadlineNanos) {
        synchronized (this) {
            while (verdictPending) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    throw new NodeFailure("restarted; whether it kept its keys is still being checked", null);
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new NodeFailure("interrupted while its restart was being checked", e);
                }
            }
            if (!quarantined) {
                return;
            }
            long left = quarantinedUntil - clock.nanoTime();
            if (left > 0) {
                throw new NodeFailure(RESTARTED + " for " + TimeUnit.NANOSECONDS.toMillis(left) + " ms more", null);
            }
            quarantined = false;
        }
        log.info("Redlock node {} rejoins quorums after its restart quarantine", address);
    }

    /**
     * Records a changed {@code run_id} and quarantines the node in the same step, so no borrower can see
     * the new {@code run_id} without the quarantine. A node declared persistent is released from the
     * quarantine only once its configuration confirms it persists every write; until that verdict,
     * borrowers wait ({@link #requireNotQuarantined}).
     */
    private void checkRunId(Jedis jedis) {
        Map<String, String> server = parseInfo(jedis.info("server"));
        String seen = server.get("run_id");
        if (seen == null) {
            throw new NodeFailure("INFO server has no run_id; is it a Redis server?", null);
        }
        String previous;
        long quarantine = quarantineNanos.getAsLong();
        synchronized (this) {
            previous = runId;
            if (seen.equals(previous)) {
                return;
            }
            runId = seen;
            if (previous != null) {
                quarantined = true;
                quarantinedUntil = clock.nanoTime() + quarantine;
                verdictPending = declaredPersistent;
            }
        }
        if (previous == null) {
            log.debug("Redlock node {} has run_id {}", address, seen);
            return;
        }
        if (declaredPersistent) {
            boolean keeps = false;
            try {
                keeps = persistsEveryWrite(jedis);
            } finally {
                synchronized (this) {
                    if (keeps) {
                        quarantined = false;
                    }
                    verdictPending = false;
                    notifyAll();
                }
            }
            if (keeps) {
                log.warn(
                        "Redlock node {} restarted (run_id {} -> {}); it persists every write, so it keeps its"
                                + " locks and stays in quorums",
                        address,
                        previous,
                        seen);
                return;
            }
        }
        log.warn(
                "Redlock node {} restarted (run_id {} -> {}) and lost its lock keys and fence counters; it is left"
                        + " out of quorums for {} ms (the longest lease time)",
                address,
                previous,
                seen,
                TimeUnit.NANOSECONDS.toMillis(quarantine));
    }

    private boolean persistsEveryWrite(Jedis jedis) {
        try {
            Map<String, String> persistence = parseInfo(jedis.info("persistence"));
            boolean aof = "1".equals(persistence.get("aof_enabled"));
            Map<String, String> fsync = jedis.configGet("appendfsync");
            boolean always = "always".equalsIgnoreCase(fsync.get("appendfsync"));
            if (aof && always) {
                return true;
            }
            log.warn(
                    "Redlock node {} is declared persistent but has aof_enabled={} appendfsync={}; treating its"
                            + " restart as a loss of state",
                    address,
                    persistence.get("aof_enabled"),
                    fsync.get("appendfsync"));
            return false;
        } catch (RuntimeException e) {
            log.warn(
                    "Redlock node {} is declared persistent; its configuration could not be read ({}), trusting the"
                            + " declaration",
                    address,
                    e.toString());
            return true;
        }
    }

    static Map<String, String> parseInfo(String info) {
        Map<String, String> out = new java.util.HashMap<>();
        for (String line : info.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                out.put(line.substring(0, colon), line.substring(colon + 1).strip());
            }
        }
        return out;
    }

    static String describe(RuntimeException e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        return root == e ? message : e.getClass().getSimpleName() + ": " + message;
    }

    @Override
    public String toString() {
        return address;
    }
}
