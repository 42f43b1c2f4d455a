package io.lockstep.tck.reference;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LockState;
import io.lockstep.MonotonicClock;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.Grant;
import io.lockstep.spi.ReleaseWatch;
import io.lockstep.tck.faults.BackendFaults;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The "server" of the reference provider: locks with an owner, a fencing token and an expiry on a
 * {@link MonotonicClock}, in this JVM's memory. Every provider opened on one store shares its locks, as
 * clients of one server do.
 *
 * <p>It keeps its promises: an operation is atomic, a lock expires at its lease time, fences per lock
 * only grow (they survive release, expiry and a simulated restart), and releases wake waiters. Its
 * {@link #faults()} simulate a server that is paused, killed and restarted (its state is durable), or
 * cut off from its clients: while it cannot be reached, calls wait for a client timeout and then throw
 * {@link BackendUnavailableException}. They also add latency to every request and reply (a call
 * sleeps before and after it takes effect, outside the store's lock; release signals are not delayed),
 * and lose replies (on each client connection open at that moment, the next operation takes effect,
 * then the caller waits for its timeout and gets {@link BackendUnavailableException}; the client's
 * later calls work, as after a reconnect).
 *
 * <p>Thread-safe.
 */
public final class InMemoryLockStore {

    private static final Logger log = LoggerFactory.getLogger(InMemoryLockStore.class);
    private static final ConcurrentMap<String, InMemoryLockStore> NAMED = new ConcurrentHashMap<>();
    /** How long a call waits for an unreachable store before it fails, like a client's socket timeout. */
    static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofMillis(100);

    private enum Reachability {
        UP,
        UNREACHABLE,
        DOWN
    }

    private record Entry(String owner, long fence, long expiresAt) {}

    private final String name;
    private final MonotonicClock clock;
    private final Duration callTimeout;
    private final Map<String, Entry> locks = new HashMap<>();
    private final Map<String, Long> fences = new HashMap<>();
    private final Map<String, Set<Watch>> watches = new HashMap<>();
    private boolean paused;
    private boolean partitioned;
    private boolean killed;
    private volatile long latencyNanos;
    private volatile boolean losingReplies;
    private volatile long replyLossEpoch;

    /**
     * One client's connection to the store: it loses its replies when it was open at {@code
     * loseReplies()}, once, then "reconnects".
     */
    static final class Connection {
        private volatile long epoch;

        private Connection(long epoch) {
            this.epoch = epoch;
        }
    }

    /** A store on the system clock. */
    public InMemoryLockStore() {
        this("in-memory", MonotonicClock.SYSTEM);
    }

    /** A store named {@code name} (for messages) on {@code clock} (tests inject one they control). */
    public InMemoryLockStore(String name, MonotonicClock clock) {
        this(name, clock, DEFAULT_CALL_TIMEOUT);
    }

    /**
     * A store whose calls wait at most {@code callTimeout} while it is unreachable.
     *
     * @throws IllegalArgumentException if {@code callTimeout} is not between 1 ms and 1 minute
     */
    public InMemoryLockStore(String name, MonotonicClock clock, Duration callTimeout) {
        this.name = Objects.requireNonNull(name, "name");
        this.clock = Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(callTimeout, "callTimeout");
        if (callTimeout.compareTo(Duration.ofMillis(1)) < 0 || callTimeout.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new IllegalArgumentException("callTimeout must be between 1 ms and 1 minute, was " + callTimeout);
        }
        this.callTimeout = callTimeout;
    }

    /**
     * The store of this JVM named {@code name}, created on first use; what {@code mem://name} opens. Kept
     * for the life of the JVM.
     */
    public static InMemoryLockStore named(String name) {
        Objects.requireNonNull(name, "name");
        return NAMED.computeIfAbsent(name, n -> new InMemoryLockStore("mem://" + n, MonotonicClock.SYSTEM));
    }

    /** The store's name, for messages. */
    public String name() {
        return name;
    }

    /** The clock expiry is measured on; providers on this store must measure validity on it too. */
    public MonotonicClock clock() {
        return clock;
    }

    /** How many locks are held now (not expired). */
    public synchronized int heldLocks() {
        long now = clock.nanoTime();
        return (int) locks.values().stream().filter(e -> e.expiresAt - now > 0).count();
    }

    /** Whether {@code lock} is held now (not expired). */
    public synchronized boolean isHeld(String lock) {
        return live(lock, clock.nanoTime()) != null;
    }

    /**
     * The store's fault hook: pause and resume, kill and restart (state survives, as on a server that
     * persists every write), partition and heal (all clients at once).
     */
    public BackendFaults faults() {
        return new Faults();
    }

    @Override
    public String toString() {
        return "InMemoryLockStore[" + name + "]";
    }

    // ---- operations, called by InMemoryLockBackend ----

    /** A new connection of a client. */
    Connection connect() {
        return new Connection(replyLossEpoch);
    }

    Attempt<InMemoryLockBackend.Handle> tryLock(Connection c, String lock, String owner, Duration leaseTime) {
        travel();
        Attempt<InMemoryLockBackend.Handle> attempt = applyTryLock(lock, owner, leaseTime);
        return reply(c, "tryLock", lock, attempt);
    }

    Optional<Duration> extend(Connection c, InMemoryLockBackend.Handle handle, Duration leaseTime) {
        travel();
        Optional<Duration> extended = applyExtend(handle, leaseTime);
        return reply(c, "extend", handle.lock(), extended);
    }

    boolean release(Connection c, InMemoryLockBackend.Handle handle) {
        travel();
        boolean released = applyRelease(handle);
        return reply(c, "release", handle.lock(), released);
    }

    void abandon(Connection c, String lock, String owner) {
        travel();
        applyAbandon(lock, owner);
        try {
            reply(c, "abandon", lock, Boolean.TRUE);
        } catch (BackendUnavailableException e) {
            // Best effort: the request took effect, only its reply was lost.
        }
    }

    /** Whether {@code lock} is held by {@code owner} now: the first half of a two-step release, for broken providers. */
    boolean isHeldBy(Connection c, String lock, String owner) {
        travel();
        boolean held;
        synchronized (this) {
            awaitReachable("get", lock);
            Entry e = live(lock, clock.nanoTime());
            held = e != null && e.owner.equals(owner);
        }
        return reply(c, "get", lock, held);
    }

    /**
     * What {@code lock} looks like now ({@link io.lockstep.LockProvider#inspect}): held, with the holder's
     * fence and the time until it expires; or free, with the last fence issued for it, if any.
     */
    LockState inspect(Connection c, String lock) {
        travel();
        LockState state;
        synchronized (this) {
            awaitReachable("inspect", lock);
            long now = clock.nanoTime();
            Entry e = live(lock, now);
            Long last = fences.get(lock);
            state = e != null
                    ? new LockState(true, OptionalLong.of(e.fence), Optional.of(Duration.ofNanos(e.expiresAt - now)))
                    : new LockState(
                            false, last == null ? OptionalLong.empty() : OptionalLong.of(last), Optional.empty());
        }
        return reply(c, "inspect", lock, state);
    }

    /**
     * Whether an entry for {@code lock} is stored, expired or not, with its fence: a read that forgets to
     * compare the expiry, for broken providers in the kit's own tests only.
     */
    synchronized OptionalLong storedFence(String lock) {
        Entry e = locks.get(lock);
        return e == null ? OptionalLong.empty() : OptionalLong.of(e.fence);
    }

    ReleaseWatch watch(String lock) {
        travel(); // subscribing is a round trip too
        ReleaseWatch watch = register(lock);
        travel();
        return watch;
    }

    /** A request or a reply on its way: the added latency, if any. */
    private void travel() {
        long nanos = latencyNanos;
        if (nanos > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(nanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BackendUnavailableException("interrupted waiting for " + name, e, false);
            }
        }
    }

    /**
     * The reply to an operation that took effect: delivered after the latency, or lost if {@code c} was
     * open when replies started to be lost (then it "reconnects": its next call works).
     */
    private <T> T reply(Connection c, String op, String lock, T value) {
        travel();
        long epoch = replyLossEpoch;
        if (!losingReplies || c.epoch >= epoch) {
            return value;
        }
        c.epoch = epoch;
        try {
            TimeUnit.NANOSECONDS.sleep(callTimeout.toNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendUnavailableException("interrupted waiting for " + name, e, false);
        }
        throw new BackendUnavailableException(
                name + " did not answer " + op + " of lock '" + lock + "' within " + callTimeout, null, true);
    }

    private synchronized Attempt<InMemoryLockBackend.Handle> applyTryLock(
            String lock, String owner, Duration leaseTime) {
        awaitReachable("tryLock", lock);
        long now = clock.nanoTime();
        Entry held = live(lock, now);
        if (held != null && !held.owner.equals(owner)) {
            return Attempt.busy(Duration.ofNanos(held.expiresAt - now));
        }
        long fence;
        if (held != null) {
            fence = held.fence; // a retried request: the same grant, the same fence
        } else {
            fence = fences.merge(lock, 1L, Long::sum);
        }
        locks.put(lock, new Entry(owner, fence, now + leaseTime.toNanos()));
        return Attempt.granted(
                Grant.of(new InMemoryLockBackend.Handle(lock, owner, fence), OptionalLong.of(fence), leaseTime));
    }

    private synchronized Optional<Duration> applyExtend(InMemoryLockBackend.Handle handle, Duration leaseTime) {
        awaitReachable("extend", handle.lock());
        long now = clock.nanoTime();
        Entry held = live(handle.lock(), now);
        if (held == null || !held.owner.equals(handle.owner())) {
            return Optional.empty();
        }
        locks.put(handle.lock(), new Entry(held.owner, held.fence, now + leaseTime.toNanos()));
        return Optional.of(leaseTime);
    }

    private synchronized boolean applyRelease(InMemoryLockBackend.Handle handle) {
        awaitReachable("release", handle.lock());
        Entry held = live(handle.lock(), clock.nanoTime());
        if (held == null || !held.owner.equals(handle.owner())) {
            return false;
        }
        locks.remove(handle.lock());
        signal(handle.lock());
        return true;
    }

    private synchronized void applyAbandon(String lock, String owner) {
        if (reachability() != Reachability.UP) {
            return; // cannot reach the store: the lock, if granted, ends by its lease time
        }
        Entry held = locks.get(lock);
        if (held != null && held.owner.equals(owner)) {
            locks.remove(lock);
            signal(lock);
        }
    }

    /**
     * Frees {@code lock} if one of {@code owners} holds it, in one step, as a backend that compares the
     * client (its session) rather than the lease would; for broken providers in the kit's own tests only.
     */
    boolean releaseIfHeldByAnyOf(Connection c, String lock, Set<String> owners) {
        travel();
        boolean released;
        synchronized (this) {
            awaitReachable("release", lock);
            Entry e = live(lock, clock.nanoTime());
            released = e != null && owners.contains(e.owner);
            if (released) {
                locks.remove(lock);
                signal(lock);
            }
        }
        return reply(c, "release", lock, released);
    }

    /** Frees {@code lock} whoever holds it; for broken providers in the kit's own tests only. */
    void forceRelease(Connection c, String lock) {
        travel();
        synchronized (this) {
            awaitReachable("release", lock);
            if (locks.remove(lock) != null) {
                signal(lock);
            }
        }
        reply(c, "release", lock, Boolean.TRUE);
    }

    private synchronized ReleaseWatch register(String lock) {
        Watch watch = new Watch(lock);
        watches.computeIfAbsent(lock, k -> new LinkedHashSet<>()).add(watch);
        return watch;
    }

    private @Nullable Entry live(String lock, long now) {
        Entry e = locks.get(lock);
        if (e != null && e.expiresAt - now <= 0) {
            locks.remove(lock);
            return null;
        }
        return e;
    }

    private void signal(String lock) {
        Set<Watch> set = watches.get(lock);
        if (set != null) {
            for (Watch w : set) {
                w.signal();
            }
        }
    }

    private Reachability reachability() {
        if (killed) {
            return Reachability.DOWN;
        }
        return paused || partitioned ? Reachability.UNREACHABLE : Reachability.UP;
    }

    /** Called holding the monitor: waits (releasing it) while unreachable, up to the call timeout. */
    private void awaitReachable(String op, String lock) {
        Reachability r = reachability();
        if (r == Reachability.UP) {
            return;
        }
        if (r == Reachability.DOWN) {
            throw new BackendUnavailableException(
                    name + " is down; " + op + " of lock '" + lock + "' was refused", null, true);
        }
        long deadline = System.nanoTime() + callTimeout.toNanos();
        try {
            while (reachability() == Reachability.UNREACHABLE) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new BackendUnavailableException(
                            name + " did not answer " + op + " of lock '" + lock + "' within " + callTimeout,
                            null,
                            true);
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendUnavailableException("interrupted waiting for " + name, e, false);
        }
        if (reachability() == Reachability.DOWN) {
            throw new BackendUnavailableException(
                    name + " is down; " + op + " of lock '" + lock + "' was refused", null, true);
        }
    }

    private synchronized void set(Runnable change, String what) {
        change.run();
        log.info("{}: {}", name, what);
        notifyAll();
    }

    private final class Faults implements BackendFaults {
        @Override
        public Set<Fault> supported() {
            return EnumSet.of(
                    Fault.PAUSE_SERVER, Fault.KILL_SERVER, Fault.PARTITION, Fault.LATENCY, Fault.LOST_REPLIES);
        }

        @Override
        public void addLatency(Duration oneWay) {
            Objects.requireNonNull(oneWay, "oneWay");
            if (oneWay.isNegative() || oneWay.compareTo(Duration.ofMinutes(1)) > 0) {
                throw new IllegalArgumentException("oneWay must be between 0 and 1 minute, was " + oneWay);
            }
            set(() -> latencyNanos = oneWay.toNanos(), "every request and reply delayed by " + oneWay);
        }

        @Override
        public void removeLatency() {
            set(() -> latencyNanos = 0, "latency removed");
        }

        @Override
        public void loseReplies() {
            set(
                    () -> {
                        replyLossEpoch++;
                        losingReplies = true;
                    },
                    "losing the replies of every open connection");
        }

        @Override
        public void restoreReplies() {
            set(() -> losingReplies = false, "delivering replies again");
        }

        @Override
        public void pauseServer() {
            set(() -> paused = true, "paused");
        }

        @Override
        public void resumeServer() {
            set(() -> paused = false, "resumed");
        }

        @Override
        public void killServer() {
            set(() -> killed = true, "killed");
        }

        @Override
        public void restartServer() {
            set(() -> killed = false, "restarted");
        }

        @Override
        public void partition() {
            set(() -> partitioned = true, "partitioned from its clients");
        }

        @Override
        public void heal() {
            set(() -> partitioned = false, "healed");
        }

        @Override
        public String toString() {
            return "faults of " + name;
        }
    }

    private final class Watch implements ReleaseWatch {
        private final String lock;
        private boolean signalled;

        Watch(String lock) {
            this.lock = lock;
        }

        synchronized void signal() {
            signalled = true;
            notifyAll();
        }

        @Override
        public synchronized boolean await(Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!signalled) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            signalled = false;
            return true;
        }

        @Override
        public void close() {
            synchronized (InMemoryLockStore.this) {
                Set<Watch> set = watches.get(lock);
                if (set != null) {
                    set.remove(this);
                    if (set.isEmpty()) {
                        watches.remove(lock);
                    }
                }
            }
        }
    }
}
