package io.lockstep.redis.internal;

import io.lockstep.Capability;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.Grant;
import io.lockstep.spi.LockBackend;
import io.lockstep.spi.ReleaseWatch;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;

/** The lock operations on one Redis (or a cluster through one {@link UnifiedJedis}). */
public final class RedisBackend implements LockBackend<RedisBackend.Handle> {

    private static final Logger log = LoggerFactory.getLogger(RedisBackend.class);

    /** What names a grant on Redis: the lock's name, its key and the owner token stored there. */
    public record Handle(String name, String lockKey, String ownerToken) {}

    private static final ProviderInfo INFO = new ProviderInfo(
            "redis",
            StrengthTier.BEST_EFFORT,
            EnumSet.of(Capability.FENCING, Capability.LEASE_EXPIRY, Capability.EXTEND, Capability.NOTIFIED_WAIT));

    private final UnifiedJedis jedis;
    private final boolean ownsClient;
    private final RedisKeys keys;
    private final double driftFactor;
    private final String where;
    private final RedisReleaseSignals signals;

    /**
     * @param jedis the client; closed with the backend if {@code ownsClient}
     * @param keyPrefix validated prefix for every key
     * @param driftFactor validated clock drift factor (see {@link ClockDrift})
     * @param where host and port, for messages
     */
    public RedisBackend(UnifiedJedis jedis, boolean ownsClient, String keyPrefix, double driftFactor, String where) {
        this.jedis = jedis;
        this.ownsClient = ownsClient;
        this.keys = new RedisKeys(keyPrefix);
        this.driftFactor = driftFactor;
        this.where = where;
        this.signals = new RedisReleaseSignals(jedis, keys.releaseChannel(), where);
    }

    @Override
    public ProviderInfo info() {
        return INFO;
    }

    @Override
    public Attempt<Handle> tryLock(String name, String ownerToken, Duration leaseTime) {
        Duration validity = ClockDrift.validity(leaseTime, driftFactor);
        if (validity.isNegative() || validity.isZero()) {
            throw new IllegalArgumentException("leaseTime must be longer than the clock drift allowance of "
                    + ClockDrift.allowance(leaseTime, driftFactor).toMillis() + " ms (leaseTime × driftFactor "
                    + driftFactor + " + 2 ms), was " + leaseTime);
        }
        long ttlMillis = leaseTime.toMillis();
        String lockKey = keys.lockKey(name);
        List<?> reply = (List<?>) RedisErrors.translate(
                where,
                "acquiring lock '" + name + "'",
                () -> RedisScripts.ACQUIRE.run(
                        jedis, List.of(lockKey, keys.fenceKey(name)), List.of(ownerToken, Long.toString(ttlMillis))));
        long granted = (Long) reply.get(0);
        long value = (Long) reply.get(1);
        if (granted == 1) {
            // The server counts PX on its own clock, which may run fast: report less by the drift allowance.
            return Attempt.granted(Grant.of(new Handle(name, lockKey, ownerToken), OptionalLong.of(value), validity));
        }
        return Attempt.busy(value > 0 ? Duration.ofMillis(value) : Duration.ofMillis(50));
    }

    @Override
    public Optional<Duration> extend(Handle handle, Duration leaseTime) {
        long ttlMillis = leaseTime.toMillis();
        Object reply = RedisErrors.translate(
                where,
                "extending lock '" + handle.name() + "'",
                () -> RedisScripts.EXTEND.run(
                        jedis, List.of(handle.lockKey()), List.of(handle.ownerToken(), Long.toString(ttlMillis))));
        if (((Long) reply) != 1) {
            return Optional.empty();
        }
        // A renewal capped by maxHold may ask for less than the allowance: the key gets that much, the
        // lease no validity at all (it ends now, as the cap says), never an error.
        Duration validity = ClockDrift.validity(leaseTime, driftFactor);
        return Optional.of(validity.isNegative() ? Duration.ZERO : validity);
    }

    @Override
    public boolean release(Handle handle) {
        Object reply = RedisErrors.translate(
                where,
                "releasing lock '" + handle.name() + "'",
                () -> RedisScripts.RELEASE.run(
                        jedis,
                        List.of(handle.lockKey()),
                        List.of(handle.ownerToken(), keys.releaseChannel(), handle.name())));
        return ((Long) reply) == 1;
    }

    @Override
    public void abandon(String name, String ownerToken) {
        try {
            release(new Handle(name, keys.lockKey(name), ownerToken));
        } catch (RuntimeException e) {
            log.debug("Could not abandon lock '{}' on Redis at {}; it ends by its TTL: {}", name, where, e.toString());
        }
    }

    @Override
    public Optional<io.lockstep.LockState> inspect(String name) {
        List<?> reply = (List<?>) RedisErrors.translate(
                where,
                "inspecting lock '" + name + "'",
                () -> RedisScripts.INSPECT.run(jedis, List.of(keys.lockKey(name), keys.fenceKey(name)), List.of()));
        long pttl = (Long) reply.get(0);
        Object fence = reply.get(1);
        OptionalLong lastFence = fence instanceof byte[] bytes
                ? OptionalLong.of(Long.parseLong(new String(bytes, java.nio.charset.StandardCharsets.US_ASCII)))
                : fence instanceof String text ? OptionalLong.of(Long.parseLong(text)) : OptionalLong.empty();
        boolean held = pttl != -2;
        // -1: a key without expiry (never written so by Lockstep): held, remaining unknown.
        Optional<Duration> remaining = pttl >= 0 ? Optional.of(Duration.ofMillis(pttl)) : Optional.empty();
        return Optional.of(new io.lockstep.LockState(held, lastFence, remaining));
    }

    @Override
    public ReleaseWatch watch(String name) {
        return signals.watch(name);
    }

    @Override
    public String describe() {
        return "Redis at " + where;
    }

    @Override
    public void close() {
        signals.close();
        if (ownsClient) {
            jedis.close();
        }
    }
}
