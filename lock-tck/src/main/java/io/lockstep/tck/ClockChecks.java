package io.lockstep.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.ClockAssumption;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.BackendFaults.Fault;
import io.lockstep.tck.faults.ChildJvmHolder;
import io.lockstep.tck.faults.FakeClock;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.FencedRegister;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The clock group's checks ({@link LockProviderCompatibilityKit}'s {@code Clock} group), in a file of their
 * own, on clocks faked by libfaketime ({@link FakeClock}):
 *
 * <ul>
 *   <li>a holder whose clocks run slow, which to the lock is the same as a server (or a waiter) whose clock
 *       runs fast: within the drift the provider declares ({@link ClockAssumption#maxRateDrift()}), the holder
 *       must count its lease over before another client gets the lock; beyond it, a fenced resource must
 *       reject the holder's write;
 *   <li>where the kit can restart the server on a fast clock ({@code SERVER_CLOCK}), the same two checks
 *       with both clients on the real clock;
 *   <li>a contender whose wall clock is far off: a provider that compares no wall clocks must not let it take
 *       a held lock (one that does is given an offset within the one it declares).
 * </ul>
 *
 * <p>One test thread drives it.
 */
final class ClockChecks {

    /** Beyond any drift a provider may declare for a Redis-style allowance ({@code ClockDrift} stays below 0.5). */
    static final double BEYOND_RATE = 1.5;
    /** How far within its declared drift the holder's clock is slowed. */
    private static final double WITHIN_SHARE = 0.8;
    /** The offset of a contender's wall clock for a provider that compares no wall clocks. */
    private static final Duration FAR_OFFSET = Duration.ofMinutes(10);

    private final LockProviderCompatibilityKit kit;

    ClockChecks(LockProviderCompatibilityKit kit) {
        this.kit = kit;
    }

    private Duration lease() {
        Duration second = kit.timing.millis(1_000);
        return kit.shortLease().compareTo(second) > 0 ? kit.shortLease() : second;
    }

    private String uri() {
        Optional<String> uri = kit.childJvmUri();
        assumeTrue(uri.isPresent(), "no childJvmUri() to start a client on another clock");
        assumeTrue(FakeClock.library().isPresent(), "libfaketime is not installed: " + FakeClock.INSTALL);
        return uri.get();
    }

    /** Within the declared drift: the slow holder's validity ends before anyone else gets the lock. */
    void slowHolderWithinTheDeclaredDrift() {
        kit.assumeCapability(Capability.LEASE_EXPIRY);
        ClockAssumption declared = kit.info().clock();
        assumeTrue(
                declared.maxRateDrift() > 0,
                () -> kit.info().name() + " declares no clock drift it tolerates (" + declared
                        + "); the check beyond it still runs");
        Outcome outcome = slowHolderThenContender("within", 1 + WITHIN_SHARE * declared.maxRateDrift(), declared);
        // The holder's hold is recorded from its answer until the least its validity can run to, in this
        // JVM's time: another client's grant inside it is an overlap, whatever the answer's delay.
        outcome.checker.check(outcome.history).assertValid();
    }

    /** Beyond the declared drift: whatever the windows did, a fenced resource rejects the stale write. */
    void slowHolderBeyondTheDeclaredDrift() {
        kit.assumeCapability(Capability.LEASE_EXPIRY);
        kit.assumeCapability(Capability.FENCING);
        ClockAssumption declared = kit.info().clock();
        assumeTrue(
                1 + declared.maxRateDrift() < BEYOND_RATE,
                () -> kit.info().name() + " declares a drift of " + declared.maxRateDrift() + ", beyond the kit's");
        Outcome outcome = slowHolderThenContender("beyond", BEYOND_RATE, declared);
        assertThat(outcome.staleWriteAccepted)
                .as("the slow holder's write with its stale fence after the new holder's")
                .isFalse();
        outcome.checker.allowingOverlaps().check(outcome.history).assertValid();
    }

    private record Outcome(History history, HistoryChecker checker, boolean staleWriteAccepted) {}

    /** Within the declared drift, on a server restarted on a fast clock: no overlap. */
    void fastServerWithinTheDeclaredDrift() {
        kit.assumeCapability(Capability.LEASE_EXPIRY);
        BackendFaults faults = kit.faultsFor(Fault.SERVER_CLOCK);
        ClockAssumption declared = kit.info().clock();
        assumeTrue(
                declared.maxRateDrift() > 0,
                () -> kit.info().name() + " declares no clock drift it tolerates (" + declared
                        + "); the check beyond it still runs");
        Outcome outcome =
                fastServerThenContender("within", 1 + WITHIN_SHARE * declared.maxRateDrift(), declared, faults);
        outcome.checker.check(outcome.history).assertValid();
    }

    /** Beyond the declared drift, on a server restarted on a clock 50% fast: fences stop the stale holder. */
    void fastServerBeyondTheDeclaredDrift() {
        kit.assumeCapability(Capability.LEASE_EXPIRY);
        kit.assumeCapability(Capability.FENCING);
        BackendFaults faults = kit.faultsFor(Fault.SERVER_CLOCK);
        ClockAssumption declared = kit.info().clock();
        assumeTrue(
                1 + declared.maxRateDrift() < BEYOND_RATE,
                () -> kit.info().name() + " declares a drift of " + declared.maxRateDrift() + ", beyond the kit's");
        Outcome outcome = fastServerThenContender("beyond", BEYOND_RATE, declared, faults);
        assertThat(outcome.staleWriteAccepted)
                .as("the holder's write with its stale fence after the new holder's")
                .isFalse();
        outcome.checker.allowingOverlaps().check(outcome.history).assertValid();
    }

    /**
     * The server is restarted on a clock {@code rate} times as fast as real time; a client on the real
     * clock takes the lock unrenewed and writes to a fenced register, another waits for the lock and
     * writes, then the first writes again, as a holder that believes its lease still runs does.
     */
    private Outcome fastServerThenContender(String label, double rate, ClockAssumption declared, BackendFaults faults) {
        String name = kit.lockName("fast-server-" + label);
        Duration lease = lease();
        History history = new History();
        kit.report().lease(lease).history(history);
        FencedRegister register = new FencedRegister(name, history);
        History.Recorder holder = history.client("holder");
        History.Recorder next = history.client("next");
        Runnable restore = kit.inject(
                String.format(
                        Locale.ROOT,
                        "SERVER_CLOCK x%.4f (libfaketime; the server restarted on it): %s fast (declared: %s)",
                        rate,
                        percent(rate),
                        percent(1 + declared.maxRateDrift())),
                () -> faults.speedUpServerClock(rate),
                faults::restoreServerClock);
        LockProvider holderClient = kit.anotherClient();
        LockProvider nextClient = kit.anotherClient();
        Lease held = acquireAfterRestart(holderClient, holder, name, lease);
        // The contender has made a round trip to the restarted server before it contends, and then tries every
        // few ms rather than waiting: as for the slow holder, the lock of a provider that ignores the drift frees
        // only a fraction of a lease early (about 0.2 s here), and a cold waiter woken by a poll or a timer on a
        // busy machine came after that window and saw no overlap (R11 of stop 37, two busy loops).
        nextClient
                .tryAcquire(kit.lockName("fast-server-warm-up-" + label), LeaseOptions.of(lease))
                .ifPresent(Lease::release);
        long validUntil = System.nanoTime() + held.remaining().toNanos();
        OptionalLong heldFence = held.fencingToken();
        heldFence.ifPresent(f -> assertThat(register.write("holder", f))
                .as("the holder's first write")
                .isTrue());

        next.invoke(Op.ACQUIRE, name);
        Lease current = kit.track(takeAsSoonAsFree(
                nextClient, name, kit.longLease(), lease.multipliedBy(3).plus(kit.margin())));
        next.acquired(current);
        long overlap = validUntil - System.nanoTime();
        boolean staleAccepted = false;
        if (current.fencingToken().isPresent() && heldFence.isPresent()) {
            assertThat(register.write("next", current.fencingToken().getAsLong()))
                    .as("the new holder's write")
                    .isTrue();
            staleAccepted = register.write("holder", heldFence.getAsLong());
        }
        kit.report()
                .observed(String.format(
                        Locale.ROOT,
                        "%s the declared drift, another client got the lock %s; the holder's write after it was %s",
                        label,
                        overlap > 0
                                ? "while the holder still counted " + overlap / 1_000_000 + " ms of its lease (overlap)"
                                : "after the holder's lease had run out (no overlap)",
                        staleAccepted ? "ACCEPTED" : heldFence.isPresent() ? "rejected" : "not tried (no fences)"));
        restore.run();
        return new Outcome(history, kit.checker(), staleAccepted);
    }

    /** Acquires on a client of a server that just restarted, retrying while it reconnects (30 s, scaled). */
    private Lease acquireAfterRestart(LockProvider client, History.Recorder rec, String name, Duration lease) {
        long deadline = System.nanoTime() + kit.timing.millis(30_000).toNanos();
        while (true) {
            rec.invoke(Op.ACQUIRE, name);
            try {
                Optional<Lease> got = client.tryAcquire(name, LeaseOptions.of(lease));
                assertThat(got)
                        .as("lease on free lock '%s' after the restart", name)
                        .isPresent();
                kit.track(got.get());
                rec.acquired(got.get());
                return got.get();
            } catch (BackendUnavailableException e) {
                rec.unknown(Op.ACQUIRE, name);
                if (!e.isTransient() || System.nanoTime() - deadline > 0) {
                    throw e;
                }
                LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
            }
        }
    }

    /**
     * A holder in a child JVM whose clocks run {@code serverRate} times slower takes the lock unrenewed and
     * writes to a fenced register; another client waits for the lock, writes, and then the holder writes
     * again, as a holder that believes its lease still runs does.
     */
    private Outcome slowHolderThenContender(String label, double serverRate, ClockAssumption declared) {
        String uri = uri();
        String name = kit.lockName("slow-holder-" + label);
        Duration lease = lease();
        History history = new History();
        kit.report().lease(lease).history(history);
        FencedRegister register = new FencedRegister(name, history);
        History.Recorder slow = history.client("slow-holder");
        History.Recorder next = history.client("next");
        Duration answer = kit.timing.millis(30_000);
        FakeClock clock = FakeClock.rate(1 / serverRate);
        String what = "holder JVM on a " + clock + ": to it, the server and other clients run " + percent(serverRate)
                + " fast (declared: " + percent(1 + declared.maxRateDrift()) + ")";
        // The contender is opened and has made a round trip before the holder takes the lock, so its first
        // attempt after the lock frees is not a cold client's.
        LockProvider contender = kit.anotherClient();
        contender
                .tryAcquire(kit.lockName("slow-holder-warm-up"), LeaseOptions.of(lease))
                .ifPresent(Lease::release);
        slow.invoke(Op.ACQUIRE, name);
        ChildJvmHolder holder = kit.track(ChildJvmHolder.builder(uri, name)
                .client("slow-holder")
                .leaseTime(lease)
                .autoRenew(false)
                .clock(clock)
                .start());
        Runnable heal = kit.inject(what, () -> {}, holder::close);
        OptionalLong holderFence = holder.awaitAcquired(answer);
        long asked = System.nanoTime();
        Duration left = holder.remaining(answer);
        // The child's clock runs 1/serverRate as fast as this JVM's: its time left lasts serverRate times longer.
        long validUntil = asked + (long) (left.toNanos() * serverRate);
        slow.ok(Op.ACQUIRE, name, holderFence, OptionalLong.of(validUntil));
        holderFence.ifPresent(f -> assertThat(register.write("slow-holder", f))
                .as("the holder's first write")
                .isTrue());

        next.invoke(Op.ACQUIRE, name);
        Lease current = kit.track(takeAsSoonAsFree(
                contender, name, kit.longLease(), lease.multipliedBy(3).plus(kit.margin())));
        next.acquired(current);
        long overlap = validUntil - System.nanoTime();
        boolean staleAccepted = false;
        if (current.fencingToken().isPresent() && holderFence.isPresent()) {
            assertThat(register.write("next", current.fencingToken().getAsLong()))
                    .as("the new holder's write")
                    .isTrue();
            staleAccepted = holder.write(register, answer);
        }
        kit.report()
                .observed(String.format(
                        Locale.ROOT,
                        "%s the declared drift, another client got the lock %s; the holder's write after it was %s",
                        label,
                        overlap > 0
                                ? "while the holder still counted " + overlap / 1_000_000 + " ms of its lease (overlap)"
                                : "after the holder's lease had run out by its own clock (no overlap)",
                        staleAccepted ? "ACCEPTED" : holderFence.isPresent() ? "rejected" : "not tried (no fences)"));
        heal.run();
        return new Outcome(history, kit.checker(), staleAccepted);
    }

    /**
     * A contender whose wall clock is far off waits for the holder's lease like any other: for a provider
     * that compares no wall clocks, ten minutes ahead; for one that does, within the offset it declares.
     * The contender's grant is recorded when its answer arrives here (its own clock cannot be merged), which
     * is after it happened: an overlap found is certain. The holder's lease is two of the group's leases so
     * that a contender granted at once, as soon as its JVM is up, is still inside it.
     */
    void contenderWithAnOffsetWallClock() {
        kit.assumeCapability(Capability.LEASE_EXPIRY);
        String uri = uri();
        ClockAssumption declared = kit.info().clock();
        Duration offset = declared.comparesWallClocks()
                ? Duration.ofMillis((long) (declared.maxWallClockOffset().toMillis() * WITHIN_SHARE))
                : FAR_OFFSET;
        String name = kit.lockName("offset-contender");
        Duration lease = lease().multipliedBy(2);
        History history = new History();
        kit.report().lease(lease).history(history);
        History.Recorder holder = history.client("holder");
        History.Recorder contender = history.client("offset-contender");

        // The contender's JVM starts, opens its provider and reads the lock before the holder takes it: a
        // cold start on a busy machine can outlast the holder's lease, and a contender that asks only after
        // the lease ended tells nothing (it once let a provider that ignores the offset pass).
        FakeClock clock = FakeClock.wallClockOffset(offset);
        Duration wait = lease.multipliedBy(2).plus(kit.margin());
        ChildJvmHolder child = kit.track(ChildJvmHolder.builder(uri, name)
                .client("offset-contender")
                .leaseTime(lease)
                .waitTime(wait)
                .autoRenew(false)
                .clock(clock)
                .acquireWhenTold()
                .start());
        Runnable heal = kit.inject("contender JVM on a " + clock, () -> {}, child::close);
        child.awaitReady(kit.timing.millis(30_000));

        holder.invoke(Op.ACQUIRE, name);
        Optional<Lease> held = kit.provider.tryAcquire(name, LeaseOptions.of(lease));
        assertThat(held).as("lease on free lock '%s'", name).isPresent();
        kit.track(held.get());
        holder.acquired(held.get());
        contender.invoke(Op.ACQUIRE, name);
        child.acquireNow();
        // Fails, naming the child's error, if it never got the lock.
        OptionalLong fence = child.awaitAcquired(wait.plus(kit.timing.millis(30_000)));
        contender.ok(Op.ACQUIRE, name, fence, OptionalLong.empty());
        heal.run();
        kit.checker().check(history).assertValid();
    }

    /**
     * Tries for {@code name} without waiting, a few milliseconds apart, until granted or {@code patience}
     * runs out. A provider that ignores drift frees the lock a fraction of a lease before the holder (slow, or
     * on the real clock beside a fast server) stops believing in it (a quarter of a second here); a waiter
     * woken by a poll or a timer can come after that window on a busy machine and see no overlap (it once let
     * such a provider pass). Trying this often takes the lock within a round trip of when the server frees it,
     * and never earlier.
     */
    private static Lease takeAsSoonAsFree(LockProvider contender, String name, Duration leaseTime, Duration patience) {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            Optional<Lease> got = contender.tryAcquire(name, LeaseOptions.of(leaseTime));
            if (got.isPresent()) {
                return got.get();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(
                        "another client did not get lock '" + name + "' within " + patience + " of the holder's grant");
            }
            LockSupport.parkNanos(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    private static String percent(double rate) {
        return String.format(Locale.ROOT, "%.1f%%", (rate - 1) * 100);
    }
}
