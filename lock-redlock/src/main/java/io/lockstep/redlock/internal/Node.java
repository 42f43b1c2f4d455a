package io.lockstep.redlock.internal;

import io.lockstep.MonotonicClock;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Set<Jedis> checked = Collections.newSetFromMap(Collections.synchronizedMap(new WeakHashMap<>()));

    private volatile boolean suspect;
    private volatile long clockOffsetMillis;
    private volatile long clockUncertaintyMillis;
    private volatile boolean clockKnown;
    private @Nullable String runId;
    private long quarantinedUntil;
    private boolean quarantined;

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

    /**
     * Borrows a connection for a fan-out: counted in flight, its {@code run_id} checked if it is new,
     * refused while the node is quarantined. The caller closes it (returning it to the pool).
     *
     * @throws NodeFailure if the node is overloaded, quarantined or unreachable
     */
    Jedis borrow() {
        if (inFlight.incrementAndGet() > maxInFlight) {
            inFlight.decrementAndGet();
            throw new NodeFailure("not answering: " + maxInFlight + " calls already in flight", null);
        }
        Jedis jedis = null;
        try {
            jedis = pool.getResource();
            if (!checked.contains(jedis)) {
                checkRunId(jedis);
                measureClock(jedis);
                checked.add(jedis);
            }
            requireNotQuarantined();
            return jedis;
        } catch (RuntimeException e) {
            if (jedis != null) {
                jedis.close();
            }
            inFlight.decrementAndGet();
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

    /** Returns a borrowed connection. */
    void giveBack(Jedis jedis) {
        try {
            jedis.close();
        } finally {
            inFlight.decrementAndGet();
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
     * EVAL on the same connection. A timeout breaks the connection (it is then destroyed, never reused).
     */
    static Object receive(Jedis jedis, Scripts.Script script, List<String> keys, List<String> args, int timeoutMillis) {
        Connection connection = jedis.getConnection();
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
                connection.rollbackTimeout();
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
     * A deadline in this node's wall-clock milliseconds, {@code budgetMillis} from now plus the
     * uncertainty of the measured offset between the clocks; 0 (no deadline) while the offset is unknown.
     * Refusing late is always safe, so a wrong offset costs availability, never exclusion, and a refusal
     * re-measures it.
     */
    long deadline(long budgetMillis) {
        if (!clockKnown) {
            return 0;
        }
        return System.currentTimeMillis() + clockOffsetMillis + budgetMillis + clockUncertaintyMillis;
    }

    /** The node refused a request as late at {@code nodeMillis}: take its clock offset from that answer. */
    void refusedAsLate(long nodeMillis, long budgetMillis) {
        long offset = nodeMillis - System.currentTimeMillis();
        if (Math.abs(offset - clockOffsetMillis) > budgetMillis) {
            log.warn(
                    "Redlock node {} refused a request as late; its clock moved by {} ms against ours",
                    address,
                    offset - clockOffsetMillis);
        }
        clockOffsetMillis = offset;
    }

    private void measureClock(Jedis jedis) {
        long before = System.currentTimeMillis();
        List<String> time = jedis.time();
        long after = System.currentTimeMillis();
        long nodeMillis = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
        clockOffsetMillis = nodeMillis - (before + after) / 2;
        clockUncertaintyMillis = (after - before) / 2 + 1;
        clockKnown = true;
    }

    void close() {
        if (ownsPool) {
            pool.close();
        }
    }

    private void requireNotQuarantined() {
        synchronized (this) {
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

    private void checkRunId(Jedis jedis) {
        Map<String, String> server = parseInfo(jedis.info("server"));
        String seen = server.get("run_id");
        if (seen == null) {
            throw new NodeFailure("INFO server has no run_id; is it a Redis server?", null);
        }
        String previous;
        synchronized (this) {
            previous = runId;
            if (seen.equals(previous)) {
                return;
            }
            runId = seen;
        }
        if (previous == null) {
            log.debug("Redlock node {} has run_id {}", address, seen);
            return;
        }
        if (declaredPersistent && persistsEveryWrite(jedis)) {
            log.warn(
                    "Redlock node {} restarted (run_id {} -> {}); it persists every write, so it keeps its locks"
                            + " and stays in quorums",
                    address,
                    previous,
                    seen);
            return;
        }
        long quarantine = quarantineNanos.getAsLong();
        synchronized (this) {
            quarantined = true;
            quarantinedUntil = clock.nanoTime() + quarantine;
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

    /** How long a quarantine lasts, for messages. */
    static Duration quarantine(Duration maxLeaseTime, Duration longestSeen) {
        return maxLeaseTime.compareTo(longestSeen) >= 0 ? maxLeaseTime : longestSeen;
    }
}
