package io.lockstep.spring.integration;

import io.lockstep.LockNames;
import io.lockstep.LockProvider;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * A Spring Integration {@code LockRegistry} over any Lockstep {@link LockProvider}: {@link #obtain(Object)}
 * returns a {@link LockstepLock}, a {@link java.util.concurrent.locks.Lock} that behaves as Spring's Redis and
 * JDBC registries' locks do, backed by a fenced Lockstep lease with a loss signal.
 *
 * <pre>{@code
 * @Bean
 * LockRegistry<?> lockRegistry(io.lockstep.LockProvider locks) {
 *     return new LockstepLockRegistry(locks);
 * }
 * }</pre>
 *
 * <p>Keys are {@link String}s used as Lockstep lock names unchanged: a key Lockstep cannot take is refused
 * by {@code obtain} with {@link LockNames#requireValid}'s message, never hashed or truncated. As in Spring's
 * registries, locks are scoped by the registry: two registries (or two processes) on the same key exclude
 * each other.
 *
 * <p>Thread-safe. It does not own {@code provider}: close that yourself (closing it releases every lock still
 * held, whose holders' {@code unlock()} then throws).
 */
public final class LockstepLockRegistry
        implements ExpirableLockRegistry<LockstepLock>, RenewableLockRegistry<LockstepLock> {

    private final LockProvider provider;
    private final LockstepLockRegistryOptions options;
    private final ConcurrentMap<String, LockstepLock> locks = new ConcurrentHashMap<>();

    /** A registry with {@link LockstepLockRegistryOptions#defaults()}: 60 s leases, renewed while held. */
    public LockstepLockRegistry(LockProvider provider) {
        this(provider, LockstepLockRegistryOptions.defaults());
    }

    /** A registry with the given lease time and renewal. */
    public LockstepLockRegistry(LockProvider provider, LockstepLockRegistryOptions options) {
        this.provider = Objects.requireNonNull(provider, "provider");
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * The lock for {@code lockKey}: the same instance for the same key until {@link #expireUnusedOlderThan}
     * removes it.
     *
     * @throws IllegalArgumentException if the key is not a {@link String} or not a valid Lockstep lock name
     */
    @Override
    public LockstepLock obtain(Object lockKey) {
        String name = requireName(lockKey);
        return locks.computeIfAbsent(name, key -> new LockstepLock(key, provider, options));
    }

    /** Forgets the locks not held in this process and last locked at least {@code age} ms ago. */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.currentTimeMillis();
        locks.values().removeIf(lock -> !lock.isAcquiredInThisProcess() && now - lock.lastUsedMillis() >= age);
    }

    /**
     * Extends the lease of {@code lockKey}, held by the current thread, to the registry's lease time from now.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold it
     * @throws IllegalStateException if its lease was lost
     */
    @Override
    public void renewLock(Object lockKey) {
        renewLock(lockKey, options.leaseTime());
    }

    /**
     * Extends the lease of {@code lockKey}, held by the current thread, to {@code ttl} from now.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold it
     * @throws IllegalStateException if its lease was lost
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        String name = requireName(lockKey);
        LockstepLock lock = locks.get(name);
        if (lock == null) {
            throw new IllegalMonitorStateException("The current thread does not own lock '" + name + "'");
        }
        lock.renew(ttl);
    }

    /**
     * Ignored: Lockstep renews held leases on its own scheduler when {@link
     * LockstepLockRegistryOptions#autoRenew()} is on (the default).
     */
    @Override
    public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
        // Renewal is Lockstep's: batched, retried within the lease's validity, with a loss signal.
    }

    /** The lease settings. */
    public LockstepLockRegistryOptions options() {
        return options;
    }

    private static String requireName(Object lockKey) {
        if (!(lockKey instanceof String name)) {
            throw new IllegalArgumentException("lockKey must be a String, was "
                    + (lockKey == null ? "null" : lockKey.getClass().getName()));
        }
        return LockNames.requireValid(name);
    }

    @Override
    public String toString() {
        return "LockstepLockRegistry[" + provider.info().name() + ", " + options + "]";
    }
}
