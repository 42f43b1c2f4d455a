package io.lockstep.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockTimeoutException;
import io.lockstep.LossReason;
import io.lockstep.ProviderInfo;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Random sequences of tryAcquire, acquire, extend and release on a few lock names by a few clients,
 * with waits past short leases, checked after every step against a model of what a lock promises: a
 * free lock is granted and a held one refused (locks are not reentrant), fences grow per lock, extend
 * and release answer true exactly while the lease is held, misuse after release throws, every lease
 * reports the validity the model gives it, and {@code lost()} completes when the lease ends.
 *
 * <p>The provider runs on its real clock, so time is never guessed: a short lease counts as held only
 * while less than half of it has passed since its request was sent, and as expired only once its lease
 * time plus the kit's margin has passed since the reply came. The driver never lets a step run between
 * the two: when a short lease is half over, or at the end of each round, it waits until every short
 * lease is certainly over, then has a random client take the lock of one of them, has the expired lease
 * extended and released (both false, leaving the new holder's lock held) and a client try the lock again. Each call must return within half a short lease, which the kit's timing
 * factor scales. A run that did not meet every outcome (granted, refused, released, misuse refused,
 * expired, answered after expiry) fails: it would check less than it claims.
 *
 * <p>The sequence is a function of the seed: {@value #SEED_PROPERTY} replays a failure, whose message
 * names the seed and the steps that led to it. Not thread-safe: one run per instance.
 */
final class ModelSequences {

    /** The system property that sets the seed. */
    static final String SEED_PROPERTY = "lockstep.tck.seed";

    /** The seed when {@value #SEED_PROPERTY} is unset: every run checks the same sequences. */
    static final long DEFAULT_SEED = 20_261_122L;

    private static final int REMEMBERED_STEPS = 25;

    /** Outcomes a run must have met, or it checked less than it claims. */
    private enum Seen {
        GRANTED,
        REFUSED,
        RELEASED_WHILE_HELD,
        MISUSE_REFUSED,
        EXPIRED,
        ANSWERED_AFTER_EXPIRY
    }

    private enum State {
        HELD,
        EXPIRED,
        RELEASED
    }

    /** The model of one lease handed out during the run. */
    private static final class ModelLease {
        final int id;
        final int client;
        final int lock;
        final Lease real;
        boolean isShort;
        Duration leaseTime;
        long sentAt;
        long returnedAt;
        State state = State.HELD;

        ModelLease(
                int id, int client, int lock, Lease real, boolean isShort, Duration leaseTime, long sentAt, long at) {
            this.id = id;
            this.client = client;
            this.lock = lock;
            this.real = real;
            this.isShort = isShort;
            this.leaseTime = leaseTime;
            this.sentAt = sentAt;
            this.returnedAt = at;
        }

        @Override
        public String toString() {
            return "lease#" + id + "(client " + client + ", lock " + lock + ", " + (isShort ? "short" : "long") + ", "
                    + state + ")";
        }
    }

    /**
     * How long a run is and the durations it uses.
     *
     * @param rounds rounds of steps; with expiry, each ends with a wait past the short leases
     * @param stepsPerRound random steps per round
     * @param withExpiry whether short leases and waits past them are used (the provider claims expiry)
     * @param shortLease a lease the run waits past; at least several round trips long
     * @param longLease a lease that outlives the run
     * @param margin how long after a lease time the backend may still hold the lock
     * @param acquireWait the wait time of {@code acquire} steps; a small fraction of {@code shortLease}
     */
    record Plan(
            int rounds,
            int stepsPerRound,
            boolean withExpiry,
            Duration shortLease,
            Duration longLease,
            Duration margin,
            Duration acquireWait) {
        Plan {
            Objects.requireNonNull(shortLease, "shortLease");
            Objects.requireNonNull(longLease, "longLease");
            Objects.requireNonNull(margin, "margin");
            Objects.requireNonNull(acquireWait, "acquireWait");
        }
    }

    private final ProviderInfo info;
    private final List<LockProvider> clients;
    private final List<String> names;
    private final Plan plan;
    private final long seed;
    private final Consumer<Lease> track;
    private final SplittableRandom random;
    private final List<ModelLease> leases = new ArrayList<>();
    private final long[] lastFence;
    private final Deque<String> history = new ArrayDeque<>();
    private final Set<Seen> seen = EnumSet.noneOf(Seen.class);
    private int step;

    /**
     * A run against {@code clients} (each a separate client of one backend) on {@code names}.
     *
     * @param track called with every lease the provider hands out, so the kit closes it after the test
     */
    ModelSequences(
            ProviderInfo info,
            List<LockProvider> clients,
            List<String> names,
            Plan plan,
            long seed,
            Consumer<Lease> track) {
        this.info = info;
        this.clients = List.copyOf(clients);
        this.names = List.copyOf(names);
        this.plan = plan;
        this.seed = seed;
        this.track = track;
        this.random = new SplittableRandom(seed);
        this.lastFence = new long[names.size()];
        java.util.Arrays.fill(lastFence, Long.MIN_VALUE);
    }

    /** The seed from {@value #SEED_PROPERTY}, {@link #DEFAULT_SEED} when unset. */
    static long seedFromSystemProperty() {
        String raw = System.getProperty(SEED_PROPERTY, "").strip();
        if (raw.isEmpty()) {
            return DEFAULT_SEED;
        }
        try {
            return Long.parseLong(raw);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(SEED_PROPERTY + " must be a whole number, was '" + raw + "'", e);
        }
    }

    /** Runs the sequence; fails naming the seed and the last steps when the provider and the model differ. */
    void run() {
        try {
            for (int round = 0; round < plan.rounds(); round++) {
                for (int i = 0; i < plan.stepsPerRound(); i++) {
                    step++;
                    waitIfAShortLeaseIsHalfOver();
                    randomStep();
                    checkLeases();
                }
                if (plan.withExpiry()) {
                    waitPastShortLeases("end of round " + (round + 1));
                }
            }
            Set<Seen> expected =
                    plan.withExpiry() ? EnumSet.allOf(Seen.class) : EnumSet.range(Seen.GRANTED, Seen.MISUSE_REFUSED);
            assertThat(seen)
                    .as("outcomes this sequence met; a sequence that misses one checks nothing about it")
                    .containsAll(expected);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError(
                    "model-based sequence failed at step " + step + " with seed " + seed + " (replay with -D"
                            + SEED_PROPERTY + "=" + seed + "); the last steps:\n  " + String.join("\n  ", history)
                            + "\n" + e.getMessage(),
                    e);
        }
    }

    // ------------------------------------------------------------------ steps

    private void randomStep() {
        int roll = random.nextInt(100);
        boolean canExtend = info.has(Capability.EXTEND);
        if (roll < 30 || leases.isEmpty()) {
            tryAcquire(random.nextInt(clients.size()), random.nextInt(names.size()), randomLeaseIsShort());
        } else if (roll < 45) {
            acquire(random.nextInt(clients.size()), random.nextInt(names.size()), randomLeaseIsShort());
        } else if (roll < 65 && canExtend) {
            extend(pickLease(), randomLeaseIsShort());
        } else {
            release(pickLease());
        }
    }

    private boolean randomLeaseIsShort() {
        return plan.withExpiry() && random.nextBoolean();
    }

    /** Mostly a lease that is still held; sometimes any lease, to check answers after expiry and misuse. */
    private ModelLease pickLease() {
        List<ModelLease> held =
                leases.stream().filter(l -> l.state == State.HELD).toList();
        if (!held.isEmpty() && random.nextInt(4) != 0) {
            return held.get(random.nextInt(held.size()));
        }
        return leases.get(random.nextInt(leases.size()));
    }

    private void tryAcquire(int client, int lock, boolean isShort) {
        Duration leaseTime = isShort ? plan.shortLease() : plan.longLease();
        @Nullable ModelLease holder = holderOf(lock);
        note("client " + client + " tryAcquire " + names.get(lock) + " for " + leaseTime + " (model: "
                + (holder == null ? "free" : "held by " + holder) + ")");
        long sentAt = System.nanoTime();
        Optional<Lease> got;
        try {
            got = clients.get(client).tryAcquire(names.get(lock), LeaseOptions.of(leaseTime));
        } catch (BackendUnavailableException e) {
            failedClosed(holder, isShort, leaseTime, e);
            return;
        }
        long returnedAt = System.nanoTime();
        got.ifPresent(track);
        if (holder == null) {
            assertThat(got)
                    .as("tryAcquire of the free lock %s by client %d", names.get(lock), client)
                    .isPresent();
            granted(client, lock, got.get(), isShort, leaseTime, sentAt, returnedAt);
        } else {
            assertThat(got)
                    .as("tryAcquire of %s by client %d while %s holds it", names.get(lock), client, holder)
                    .isEmpty();
            seen.add(Seen.REFUSED);
        }
    }

    private void acquire(int client, int lock, boolean isShort) {
        Duration leaseTime = isShort ? plan.shortLease() : plan.longLease();
        LeaseOptions options = LeaseOptions.of(leaseTime).withWaitTime(plan.acquireWait());
        @Nullable ModelLease holder = holderOf(lock);
        note("client " + client + " acquire " + names.get(lock) + " for " + leaseTime + " waiting " + plan.acquireWait()
                + " (model: " + (holder == null ? "free" : "held by " + holder) + ")");
        LockProvider provider = clients.get(client);
        if (holder == null) {
            long sentAt = System.nanoTime();
            Lease lease;
            try {
                lease = provider.acquire(names.get(lock), options);
            } catch (BackendUnavailableException e) {
                failedClosed(null, isShort, leaseTime, e);
                return;
            }
            long returnedAt = System.nanoTime();
            track.accept(lease);
            seen.add(Seen.GRANTED);
            granted(client, lock, lease, isShort, leaseTime, sentAt, returnedAt);
        } else {
            assertThatThrownBy(() -> track.accept(provider.acquire(names.get(lock), options)))
                    .as("acquire of %s by client %d while %s holds it", names.get(lock), client, holder)
                    .isInstanceOf(LockTimeoutException.class);
            seen.add(Seen.REFUSED);
        }
    }

    /**
     * An acquire of a free lock for a short lease failed closed: on a machine that stalls longer than the
     * lease, a grant arrives with no validity left, and the provider gives it back and throws. Nothing may
     * be left behind beyond the lease time, so the model waits that long (plus the margin) and goes on with
     * the lock free; a later step finds it held if the provider left it so. The short leases the model holds
     * may end during that wait, so they are then waited past and checked as ended, as at a round's end. Any
     * other failure fails the sequence, as before.
     */
    private void failedClosed(
            @Nullable ModelLease holder, boolean isShort, Duration leaseTime, BackendUnavailableException e) {
        if (holder != null || !isShort) {
            throw e;
        }
        note("  failed closed (" + e.getMessage() + "); waiting past the short lease it asked for");
        sleepUntil(System.nanoTime() + leaseTime.toNanos() + plan.margin().toNanos());
        waitPastShortLeases("an acquire failed closed");
    }

    private void extend(ModelLease lease, boolean isShort) {
        Duration leaseTime = isShort ? plan.shortLease() : plan.longLease();
        note("extend " + lease + " to " + leaseTime);
        if (lease.state == State.RELEASED) {
            assertThatThrownBy(() -> lease.real.extend(leaseTime))
                    .as("extend of released %s", lease)
                    .isInstanceOf(IllegalStateException.class);
            seen.add(Seen.MISUSE_REFUSED);
            return;
        }
        long sentAt = System.nanoTime();
        boolean extended = lease.real.extend(leaseTime);
        long returnedAt = System.nanoTime();
        assertThat(extended).as("extend of %s", lease).isEqualTo(lease.state == State.HELD);
        if (lease.state == State.EXPIRED) {
            seen.add(Seen.ANSWERED_AFTER_EXPIRY);
        }
        if (extended) {
            lease.isShort = isShort;
            lease.leaseTime = leaseTime;
            lease.sentAt = sentAt;
            lease.returnedAt = returnedAt;
        }
    }

    private void release(ModelLease lease) {
        note("release " + lease);
        if (lease.state == State.RELEASED) {
            assertThatThrownBy(lease.real::release)
                    .as("release of released %s", lease)
                    .isInstanceOf(IllegalStateException.class);
            seen.add(Seen.MISUSE_REFUSED);
            return;
        }
        boolean wasHeld = lease.state == State.HELD;
        assertThat(lease.real.release()).as("release of %s", lease).isEqualTo(wasHeld);
        lease.state = State.RELEASED;
        LossReason reason = lossReason(lease);
        if (wasHeld) {
            assertThat(reason).as("lost() of released %s", lease).isEqualTo(LossReason.RELEASED);
            seen.add(Seen.RELEASED_WHILE_HELD);
        } else {
            seen.add(Seen.ANSWERED_AFTER_EXPIRY);
        }
    }

    private void granted(
            int client, int lock, Lease lease, boolean isShort, Duration leaseTime, long sentAt, long returnedAt) {
        ModelLease model = new ModelLease(leases.size(), client, lock, lease, isShort, leaseTime, sentAt, returnedAt);
        leases.add(model);
        note("  granted " + model + ", fence " + lease.fencingToken());
        if (info.has(Capability.FENCING)) {
            assertThat(lease.fencingToken()).as("fencing token of %s", model).isPresent();
            assertThat(lease.fencingToken().getAsLong())
                    .as("fence of %s after fence %d on the same lock", model, lastFence[lock])
                    .isGreaterThan(lastFence[lock]);
            lastFence[lock] = lease.fencingToken().getAsLong();
        }
    }

    // ------------------------------------------------------------------ time

    private void waitIfAShortLeaseIsHalfOver() {
        long now = System.nanoTime();
        boolean halfOver = leases.stream()
                .anyMatch(l -> l.state == State.HELD && l.isShort && now - l.sentAt > l.leaseTime.toNanos() / 2);
        if (halfOver) {
            waitPastShortLeases("a short lease is half over");
        }
    }

    /** Sleeps until every held short lease is over on the backend too, then checks they ended. */
    private void waitPastShortLeases(String why) {
        List<ModelLease> ending =
                leases.stream().filter(l -> l.state == State.HELD && l.isShort).toList();
        if (ending.isEmpty()) {
            return;
        }
        long until = ending.stream()
                .mapToLong(l ->
                        l.returnedAt + l.leaseTime.toNanos() + plan.margin().toNanos())
                .max()
                .getAsLong();
        note("wait past " + ending.size() + " short lease(s): " + why);
        sleepUntil(until);
        for (ModelLease lease : ending) {
            lease.state = State.EXPIRED;
            seen.add(Seen.EXPIRED);
            assertThat(lossReason(lease)).as("lost() of expired %s", lease).isNotEqualTo(LossReason.RELEASED);
        }
        checkLeases();
        // At once: the lock of one of them is free for anyone; the expired lease then answers false and
        // leaves the new holder's lock held.
        ModelLease expired = ending.get(random.nextInt(ending.size()));
        tryAcquire(random.nextInt(clients.size()), expired.lock, randomLeaseIsShort());
        checkLeases();
        if (info.has(Capability.EXTEND)) {
            extend(expired, randomLeaseIsShort());
            checkLeases();
        }
        release(expired);
        checkLeases();
        tryAcquire(random.nextInt(clients.size()), expired.lock, randomLeaseIsShort());
        checkLeases();
    }

    private static void sleepUntil(long nanoTime) {
        try {
            long left;
            while ((left = nanoTime - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.sleep(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    // ------------------------------------------------------------------ checks

    /** Every lease's own view agrees with the model. */
    private void checkLeases() {
        for (ModelLease lease : leases) {
            if (lease.state == State.HELD) {
                assertThat(lease.real.isValid()).as("isValid() of %s", lease).isTrue();
                assertThat(lease.real.remaining())
                        .as("remaining() of %s", lease)
                        .isPositive()
                        .isLessThanOrEqualTo(lease.leaseTime);
                assertThat(lease.real.lost().toCompletableFuture())
                        .as("lost() of %s", lease)
                        .isNotDone();
            } else {
                assertThat(lease.real.isValid()).as("isValid() of %s", lease).isFalse();
                assertThat(lease.real.remaining())
                        .as("remaining() of %s", lease)
                        .isEqualTo(Duration.ZERO);
            }
        }
    }

    private LossReason lossReason(ModelLease lease) {
        try {
            return lease.real.lost().toCompletableFuture().get(plan.margin().toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("lost() of " + lease + " did not complete within " + plan.margin(), e);
        } catch (ExecutionException e) {
            throw new AssertionError("lost() of " + lease + " completed exceptionally", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    private @Nullable ModelLease holderOf(int lock) {
        for (ModelLease lease : leases) {
            if (lease.lock == lock && lease.state == State.HELD) {
                return lease;
            }
        }
        return null;
    }

    private void note(String what) {
        history.addLast(step + ": " + what);
        while (history.size() > REMEMBERED_STEPS) {
            history.removeFirst();
        }
    }
}
