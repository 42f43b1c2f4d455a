package io.lockstep.redis.internal;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.Holder;
import io.lockstep.LossReason;
import io.lockstep.MonotonicClock;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * The lock operations on one Redis (or a cluster through one {@link UnifiedJedis}).
 *
 * <h2>Waiters queue on the server, and a release grants the first ({@link Capability#FAIR})</h2>
 *
 * A waiter (an acquire with a wait time, which opens {@link #watch(String, String)}) joins a queue kept
 * beside the lock, in the lock's hash slot, with an entry that lives {@link #QUEUE_ENTRY_TTL} unless the
 * waiter refreshes it (each of its attempts does, at least every second). A release hands the lock to
 * the first live waiter in the same script (its value, lease time and a new fence) and announces the
 * grant on the release channel; the waiter takes it from the notice without a request of its own, so a
 * handoff costs the release's round trip and the notice, and waiters are served in the order they came,
 * across processes. Its validity is counted from a moment known to precede the grant ({@link
 * RedisWaiter}). A waiter that gives up withdraws ({@link RedisScripts#WITHDRAW}), releasing and handing
 * on a grant that came meanwhile; a dead waiter's entry expires and releases skip it. An acquire without
 * a wait (no queue entry) takes a free lock only if no live waiter is queued; with nobody queued it is
 * one script, as before.
 */
public final class RedisBackend implements LockBackend<RedisBackend.Handle> {

    private static final Logger log = LoggerFactory.getLogger(RedisBackend.class);

    /**
     * What names a grant on Redis: the lock's name, the owner token and the holder. The value stored in
     * the lock's key, {@code <owner token> <host> <pid>[ <label>]} ({@link #value()}), which every script
     * compares whole, and the key itself are rebuilt for each call rather than kept: with many locks held,
     * two strings fewer per lock (about 170 bytes; the owner token is the lease's own string). Under
     * Sentinel it also keeps the grant's failover signal, which the topology holds only weakly.
     */
    public record Handle(
            String name, String ownerToken, Holder holder, @Nullable CompletionStage<LossReason> failover) {

        /** The value stored in the lock's key. */
        public String value() {
            return storedValue(ownerToken, holder);
        }
    }

    /** This process without a label: the holder of most grants, kept once rather than per grant. */
    private static final Holder UNLABELLED = Holder.thisProcess(null);

    /** What every Redis provider claims, on one server, Sentinel or Cluster alike. */
    public static final ProviderInfo INFO = new ProviderInfo(
            "redis",
            StrengthTier.BEST_EFFORT,
            EnumSet.of(
                    Capability.FENCING,
                    Capability.LEASE_EXPIRY,
                    Capability.EXTEND,
                    Capability.NOTIFIED_WAIT,
                    Capability.FAIR));

    /**
     * How long a queued waiter's entry lives without a refresh. A live waiter refreshes at least every
     * second (lock-api's polling bound), so it keeps its place through four missed refreshes; a dead one
     * is skipped by releases after this long (before that, a release may still grant it: the lock then
     * stays taken until that grant's lease time runs out).
     */
    static final Duration QUEUE_ENTRY_TTL = Duration.ofSeconds(5);

    /** The longest a queued waiter waits before refreshing its entry, whatever the holder's TTL. */
    static final Duration QUEUE_REFRESH = Duration.ofSeconds(1);

    private final RedisTopology topology;
    private final UnifiedJedis jedis;
    private final ReplicaAck ack;
    private final RedisKeys keys;
    private final double driftFactor;
    private final String where;
    private final RedisReleaseSignals signals;
    private final MonotonicClock clock;
    /** The open queued waiters, by owner token. */
    private final Map<String, RedisWaiter> waiters = new ConcurrentHashMap<>();
    /**
     * Whether the server is known to hold the scripts: set once they were loaded, cleared when a server
     * answers NOSCRIPT (it restarted or flushed them), so the next call loads them all again.
     */
    private volatile boolean scriptsLoaded;

    /**
     * @param jedis the client; closed with the backend if {@code ownsClient}
     * @param keyPrefix validated prefix for every key
     * @param driftFactor validated clock drift factor (see {@link ClockDrift})
     * @param where host and port, for messages
     */
    public RedisBackend(UnifiedJedis jedis, boolean ownsClient, String keyPrefix, double driftFactor, String where) {
        this(
                RedisTopology.direct(jedis, ownsClient),
                ReplicaAck.NONE,
                keyPrefix,
                driftFactor,
                where,
                MonotonicClock.SYSTEM);
    }

    /**
     * @param topology how Redis is reached; closed with the backend
     * @param ack the replica acknowledgement acquire and extend wait for ({@link ReplicaAck#NONE}: none)
     * @param keyPrefix validated prefix for every key
     * @param driftFactor validated clock drift factor (see {@link ClockDrift})
     * @param where host and port, for messages
     * @param clock the runtime's clock, on which validity is counted (a grant taken from a notice is
     *     counted from an earlier reading of it)
     */
    public RedisBackend(
            RedisTopology topology,
            ReplicaAck ack,
            String keyPrefix,
            double driftFactor,
            String where,
            MonotonicClock clock) {
        this(topology, ack, keyPrefix, driftFactor, where, clock, GrantLane.DEFAULT_WAIT);
    }

    /**
     * As {@link #RedisBackend(RedisTopology, ReplicaAck, String, double, String, MonotonicClock)}, with
     * {@code inboxWait}: the longest the oldest waiter blocks on its grant inbox per request ({@link
     * GrantLane}); zero turns the inbox off.
     */
    public RedisBackend(
            RedisTopology topology,
            ReplicaAck ack,
            String keyPrefix,
            double driftFactor,
            String where,
            MonotonicClock clock,
            Duration inboxWait) {
        this.clock = clock;
        this.topology = topology;
        this.jedis = topology.client();
        this.ack = ack;
        this.keys = new RedisKeys(keyPrefix);
        this.driftFactor = driftFactor;
        this.where = where;
        this.signals = new RedisReleaseSignals(jedis, keys, where, inboxWait);
    }

    @Override
    public ProviderInfo info() {
        // The key's TTL runs on the server's clock; validity leaves driftFactor of it (ClockDrift).
        return INFO.withClock(io.lockstep.ClockAssumption.rateDrift(driftFactor));
    }

    @Override
    public Attempt<Handle> tryLock(String name, String ownerToken, Duration leaseTime) {
        return tryLock(new AttemptContext(name, ownerToken, leaseTime));
    }

    /**
     * The value a grant keeps in its key: the owner token, a space and the holder ({@link HolderText}), so
     * that {@code inspect} can tell who holds the lock with no extra key or round trip. The owner token
     * never contains a space, so the holder is whatever follows the first one.
     */
    static String storedValue(AttemptContext attempt) {
        return storedValue(attempt.ownerToken(), attempt.holder());
    }

    private static String storedValue(String ownerToken, Holder holder) {
        return ownerToken + " " + HolderText.encode(holder);
    }

    /** A grant's handle, with the shared holder when the attempt's is this process without a label. */
    private static Handle handle(String name, AttemptContext attempt, @Nullable CompletionStage<LossReason> failover) {
        Holder holder = attempt.holder().equals(UNLABELLED) ? UNLABELLED : attempt.holder();
        return new Handle(name, attempt.ownerToken(), holder, failover);
    }

    @Override
    public Attempt<Handle> tryLock(AttemptContext attempt) {
        String name = attempt.name();
        Duration leaseTime = attempt.leaseTime();
        Duration validity = ClockDrift.validity(leaseTime, driftFactor);
        if (validity.isNegative() || validity.isZero()) {
            throw new IllegalArgumentException("leaseTime must be longer than the clock drift allowance of "
                    + ClockDrift.allowance(leaseTime, driftFactor).toMillis() + " ms (leaseTime × driftFactor "
                    + driftFactor + " + 2 ms), was " + leaseTime);
        }
        @Nullable RedisWaiter waiter = waiters.get(attempt.ownerToken());
        if (waiter != null && !waiter.name().equals(name)) {
            waiter = null;
        }
        if (waiter != null && !ack.enabled()) {
            // With waitReplicas a grant counts only once WAIT confirmed it: take it by a round trip.
            RedisWaiter.Noticed noticed = waiter.takeNoticed();
            if (noticed != null) {
                Duration left = validity.minusNanos(clock.nanoTime() - noticed.validFrom());
                waiter.granted();
                return Attempt.granted(new Grant<>(
                        handle(name, attempt, noticed.failover()),
                        OptionalLong.of(noticed.fence()),
                        left.isNegative() ? Duration.ZERO : left,
                        noticed.failover()));
            }
        }
        String what = "acquiring lock '" + name + "'";
        String lockKey = keys.lockKey(name);
        List<String> scriptKeys = keys.scriptKeys(name);
        List<String> scriptArgs = List.of(
                storedValue(attempt),
                Long.toString(leaseTime.toMillis()),
                waiter != null ? Long.toString(QUEUE_ENTRY_TTL.toMillis()) : "0",
                waiter != null ? waiter.tokenHash() : "",
                keys.releaseChannel(),
                name,
                // A waiter that will block on its inbox needs no notice of its grant (one wake-up less).
                waiter != null && waiter.blocksOnInbox() ? "1" : "0");
        // Taken before the write: a failover racing it ends the lease rather than going unnoticed. A grant
        // that replicas acknowledged is expected to survive a failover, so it does not listen.
        @Nullable CompletionStage<LossReason> failover = ack.enabled() ? null : topology.primaryLoss();
        long sentAt = clock.nanoTime();
        ReplicaAck.Acknowledged acknowledged = ack.enabled()
                ? RedisErrors.translate(where, what, () -> {
                    ensureScripts(lockKey);
                    return ack.run(jedis, RedisScripts.ACQUIRE, lockKey, scriptKeys, scriptArgs);
                })
                : new ReplicaAck.Acknowledged(
                        RedisErrors.translate(where, what, () -> run(RedisScripts.ACQUIRE, scriptKeys, scriptArgs)), 0);
        List<?> reply = (List<?>) acknowledged.reply();
        long granted = (Long) reply.get(0);
        long value = (Long) reply.get(1);
        if (granted == 1) {
            Handle handle = handle(name, attempt, failover);
            if (ack.enabled() && acknowledged.acknowledgedBy() < ack.replicas()) {
                // Fail closed: what only the primary has may vanish in a failover. Take it back now; if that
                // fails too, the caller's abandon() tries again and the TTL ends it at the latest.
                abandon(attempt);
                throw ack.notAcknowledged(what, where, acknowledged.acknowledgedBy());
            }
            if (waiter != null) {
                waiter.granted();
            }
            // The server counts PX on its own clock, which may run fast: report less by the drift allowance.
            return Attempt.granted(new Grant<>(handle, OptionalLong.of(value), validity, failover));
        }
        Duration retryAfter = value > 0 ? Duration.ofMillis(value) : Duration.ofMillis(50);
        if (waiter != null) {
            waiter.stillWaiting(sentAt, reply.size() > 2 ? (Long) reply.get(2) : 0, failover);
            if (retryAfter.compareTo(QUEUE_REFRESH) > 0) {
                retryAfter = QUEUE_REFRESH;
            }
        }
        return Attempt.busy(retryAfter);
    }

    @Override
    public Optional<Duration> extend(Handle handle, Duration leaseTime) {
        long ttlMillis = leaseTime.toMillis();
        String what = "extending lock '" + handle.name() + "'";
        String lockKey = keys.lockKey(handle.name());
        List<String> scriptKeys = List.of(lockKey);
        List<String> scriptArgs = List.of(handle.value(), Long.toString(ttlMillis));
        ReplicaAck.Acknowledged acknowledged = ack.enabled()
                ? RedisErrors.translate(where, what, () -> {
                    ensureScripts(lockKey);
                    return ack.run(jedis, RedisScripts.EXTEND, lockKey, scriptKeys, scriptArgs);
                })
                : new ReplicaAck.Acknowledged(
                        RedisErrors.translate(where, what, () -> run(RedisScripts.EXTEND, scriptKeys, scriptArgs)), 0);
        if (((Long) acknowledged.reply()) != 1) {
            return Optional.empty();
        }
        if (ack.enabled() && acknowledged.acknowledgedBy() < ack.replicas()) {
            // The longer TTL may exist on the primary only: do not count it (a renewal is retried while
            // validity is left, then the lease ends as RENEWAL_FAILED).
            throw ack.notAcknowledged(what, where, acknowledged.acknowledgedBy());
        }
        return Optional.of(extendedValidity(leaseTime));
    }

    /** Keys per {@link RedisScripts#EXTEND_MANY} call: a script runs atomically, so keep it short. */
    static final int MAX_RENEWAL_BATCH = 500;

    @Override
    public int maxRenewalBatch() {
        // With waitReplicas each extension must be acknowledged on its own (WAIT counts one write).
        return ack.enabled() ? 1 : MAX_RENEWAL_BATCH;
    }

    /**
     * One {@code EXTEND_MANY} script per batch on a single server; on a cluster (where one script may
     * only touch one hash slot) one per slot among the batch's keys.
     */
    @Override
    public List<Optional<Duration>> extendAll(List<Extension<Handle>> extensions) {
        if (!(jedis instanceof JedisCluster)) {
            return extendInOneScript(extensions);
        }
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < extensions.size(); i++) {
            bySlot.computeIfAbsent(
                            JedisClusterCRC16.getSlot(
                                    keys.lockKey(extensions.get(i).handle().name())),
                            slot -> new ArrayList<>())
                    .add(i);
        }
        List<Optional<Duration>> results = new ArrayList<>(Collections.nCopies(extensions.size(), Optional.empty()));
        for (List<Integer> indexes : bySlot.values()) {
            List<Optional<Duration>> slotResults =
                    extendInOneScript(indexes.stream().map(extensions::get).toList());
            for (int j = 0; j < indexes.size(); j++) {
                results.set(indexes.get(j), slotResults.get(j));
            }
        }
        return results;
    }

    private List<Optional<Duration>> extendInOneScript(List<Extension<Handle>> extensions) {
        List<String> keysOf = new ArrayList<>(extensions.size());
        List<String> args = new ArrayList<>(2 * extensions.size());
        for (Extension<Handle> extension : extensions) {
            keysOf.add(keys.lockKey(extension.handle().name()));
            args.add(extension.handle().value());
            args.add(Long.toString(extension.leaseTime().toMillis()));
        }
        List<?> reply = (List<?>) RedisErrors.translate(
                where, "extending " + extensions.size() + " locks", () -> run(RedisScripts.EXTEND_MANY, keysOf, args));
        if (reply.size() != extensions.size()) {
            throw new BackendUnavailableException(
                    "extending " + extensions.size() + " locks failed: Redis at " + where + " answered " + reply.size()
                            + " results",
                    null,
                    false);
        }
        List<Optional<Duration>> results = new ArrayList<>(extensions.size());
        Duration leaseTime = null;
        Optional<Duration> validity = Optional.empty();
        for (int i = 0; i < extensions.size(); i++) {
            if (((Long) reply.get(i)) != 1) {
                results.add(Optional.empty());
                continue;
            }
            Duration asked = extensions.get(i).leaseTime();
            if (!asked.equals(leaseTime)) { // a batch mostly shares one lease time: compute its validity once
                leaseTime = asked;
                validity = Optional.of(extendedValidity(asked));
            }
            results.add(validity);
        }
        return results;
    }

    private Duration extendedValidity(Duration leaseTime) {
        // A renewal capped by maxHold may ask for less than the allowance: the key gets that much, the
        // lease no validity at all (it ends now, as the cap says), never an error.
        Duration validity = ClockDrift.validity(leaseTime, driftFactor);
        return validity.isNegative() ? Duration.ZERO : validity;
    }

    @Override
    public boolean release(Handle handle) {
        Object reply = RedisErrors.translate(
                where,
                "releasing lock '" + handle.name() + "'",
                () -> run(
                        RedisScripts.RELEASE,
                        keys.scriptKeys(handle.name()),
                        List.of(handle.value(), keys.releaseChannel(), handle.name())));
        return ((Long) reply) == 1;
    }

    /**
     * Runs {@code script} by its SHA-1 after making sure the server has every script, so neither a
     * lease's first acquire nor its first renewal pays a NOSCRIPT miss and an {@code EVAL}. A server
     * that lost them since answers NOSCRIPT once; then all are loaded again.
     */
    private Object run(LuaScript script, List<String> scriptKeys, List<String> scriptArgs) {
        ensureScripts(scriptKeys.get(0));
        return script.run(jedis, scriptKeys, scriptArgs, () -> {
            scriptsLoaded = false;
            loadScripts(scriptKeys.get(0));
        });
    }

    private void ensureScripts(String sampleKey) {
        if (!scriptsLoaded) {
            loadScripts(sampleKey);
        }
    }

    /**
     * Loads every script. A connection failure is the calling operation's failure (translated by its
     * caller, so the call stays bounded as before); a server that refuses {@code SCRIPT LOAD} (an ACL
     * user without it) is not asked again, and each script then loads itself by {@code EVAL} on a miss.
     */
    private void loadScripts(String sampleKey) {
        try {
            RedisScripts.loadAll(jedis, sampleKey);
        } catch (JedisDataException e) {
            log.debug("Redis at {} refused to load the lock scripts; they load on first use: {}", where, e.toString());
        }
        scriptsLoaded = true;
    }

    /**
     * Leaves nothing of a failed attempt: withdraws the owner token's queue entry and releases (handing
     * on) the lock if the attempt or a release on its behalf granted it ({@link RedisScripts#WITHDRAW}).
     */
    @Override
    public void abandon(AttemptContext attempt) {
        withdraw(attempt.name(), attempt.ownerToken(), RedisWaiter.tokenHash(attempt.ownerToken()));
    }

    private void withdraw(String name, String ownerToken, String tokenHash) {
        try {
            RedisErrors.translate(
                    where,
                    "withdrawing from the queue of lock '" + name + "'",
                    () -> run(
                            RedisScripts.WITHDRAW,
                            keys.scriptKeys(name),
                            List.of(ownerToken, keys.releaseChannel(), name, tokenHash)));
        } catch (RuntimeException e) {
            log.debug(
                    "Could not withdraw from lock '{}' on Redis at {}; its queue entry expires in {} and a grant"
                            + " it got ends by its TTL: {}",
                    name,
                    where,
                    QUEUE_ENTRY_TTL,
                    e.toString());
        }
    }

    @Override
    public Optional<io.lockstep.LockState> inspect(String name) {
        List<?> reply = (List<?>) RedisErrors.translate(
                where,
                "inspecting lock '" + name + "'",
                () -> run(RedisScripts.INSPECT, List.of(keys.lockKey(name), keys.fenceKey(name)), List.of()));
        long pttl = (Long) reply.get(0);
        @Nullable String fence = text(reply.get(1));
        OptionalLong lastFence = fence != null ? OptionalLong.of(Long.parseLong(fence)) : OptionalLong.empty();
        boolean held = pttl != -2;
        // -1: a key without expiry (never written so by Lockstep): held, remaining unknown.
        Optional<Duration> remaining = pttl >= 0 ? Optional.of(Duration.ofMillis(pttl)) : Optional.empty();
        // A value written by an older client is the owner token alone: no holder.
        Optional<Holder> holder = held && reply.size() > 2 ? HolderText.decode(text(reply.get(2))) : Optional.empty();
        return Optional.of(new io.lockstep.LockState(held, lastFence, remaining, holder));
    }

    private static @Nullable String text(@Nullable Object reply) {
        return reply instanceof byte[] bytes
                ? new String(bytes, StandardCharsets.US_ASCII)
                : reply instanceof String text ? text : null;
    }

    @Override
    public ReleaseWatch watch(String name) {
        return signals.watch(name);
    }

    /**
     * Queues {@code ownerToken} on the server for {@code name} from its next attempt on: while the watch is
     * open, each {@link #tryLock(AttemptContext)} of that token refreshes its place, and a release that
     * grants it the lock wakes it alone. Closing the watch without the lock having been taken withdraws at
     * once (one script call), releasing and handing on a grant that came meanwhile.
     */
    @Override
    public ReleaseWatch watch(String name, String ownerToken) {
        RedisWaiter waiter = signals.openWaiter(name, ownerToken, w -> {
            waiters.remove(w.ownerToken(), w);
            if (!w.wasGranted()) {
                withdraw(w.name(), w.ownerToken(), w.tokenHash()); // the hash it was opened with
            }
        });
        waiters.put(ownerToken, waiter);
        return waiter;
    }

    @Override
    public String describe() {
        return "Redis at " + where;
    }

    @Override
    public void close() {
        signals.close();
        topology.close();
    }
}
