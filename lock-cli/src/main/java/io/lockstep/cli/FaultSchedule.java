package io.lockstep.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * When each fault starts, on absolute times from the start of a run: the same seed, duration, lease and
 * faults give the same schedule on every row, and a fault never starts before the previous one's slot is
 * over, so the time after a fault (its recovery) belongs to that fault alone.
 *
 * <p>Each fault gets a slot: its length, a recovery allowance (two leases, at least 2 s), and where it needs
 * one a set-up budget (starting the child JVM of a frozen holder) or a restart budget (a killed server).
 * Spare time beyond the sum of the slots is shared out evenly and each fault starts at a seeded offset
 * inside its share.
 *
 * @param entries the faults in the order they run
 * @param duration how long the run lasts
 */
record FaultSchedule(List<Entry> entries, Duration duration) {

    /** Quiet time at the start, before the first fault's slot. */
    static final Duration LEAD = Duration.ofSeconds(1);
    /**
     * Budget for a fault's child JVM before it starts: the frozen holder (started before the run) takes the
     * lock in it, and the clock fault's holder starts its JVM on the slow clock in it.
     */
    static final Duration CHILD_START = Duration.ofSeconds(3);
    /** Budget for a killed server to restart and answer again. */
    static final Duration RESTART = Duration.ofSeconds(3);
    /** How much faster the clock fault's clock runs: 50%, beyond the drift any provider declares. */
    static final double CLOCK_RATE = 1.5;

    /**
     * One fault.
     *
     * @param kind the fault
     * @param prepareAt when its set-up begins (the frozen holder, whose JVM was started before the run,
     *     is told to take the lock here); {@code at} for the others
     * @param at when the fault itself starts
     * @param length how long it lasts (a killed server's restart comes on top)
     * @param windowEnd when its window ends: the next fault's {@code prepareAt}, or the end of the run;
     *     its recovery must be seen before then
     */
    record Entry(FaultKind kind, Duration prepareAt, Duration at, Duration length, Duration windowEnd) {}

    FaultSchedule {
        entries = List.copyOf(entries);
    }

    /** The recovery allowance after each fault: two leases, at least 2 s. */
    static Duration allowance(Duration lease) {
        Duration two = lease.multipliedBy(2);
        return two.compareTo(Duration.ofSeconds(2)) < 0 ? Duration.ofSeconds(2) : two;
    }

    /** The shortest run that gives every fault its slot. */
    static Duration minimumDuration(List<FaultKind> kinds, Duration length, Duration lease) {
        Duration total = LEAD;
        for (FaultKind k : kinds) {
            total = total.plus(slot(k, length, lease));
        }
        return total;
    }

    private static Duration setUp(FaultKind kind) {
        return kind == FaultKind.HOLDER_PAUSE ? CHILD_START : Duration.ZERO;
    }

    /**
     * How long the fault lasts: {@code length}, except the clock fault, whatever {@code --fault-length} says,
     * so that it stays short: it starts with its child JVM on a slow clock or the server's restart on a fast
     * one ({@link #CHILD_START} for either), and lasts while its holder believes it holds the lock, one lease
     * on a clock {@link #CLOCK_RATE} times slower.
     */
    static Duration lengthOf(FaultKind kind, Duration length, Duration lease) {
        return kind == FaultKind.CLOCK ? CHILD_START.plusMillis(Math.round(lease.toMillis() * CLOCK_RATE)) : length;
    }

    private static Duration slot(FaultKind kind, Duration length, Duration lease) {
        // A killed server restarts; the clock fault's server, where it has one, restarts on the real clock.
        Duration restart = kind == FaultKind.SERVER_KILL || kind == FaultKind.CLOCK ? RESTART : Duration.ZERO;
        return setUp(kind).plus(lengthOf(kind, length, lease)).plus(restart).plus(allowance(lease));
    }

    /**
     * Orders {@code kinds} by {@code seed} and places them on absolute times over {@code duration}.
     *
     * @throws IllegalArgumentException if {@code duration} is shorter than {@link #minimumDuration}
     */
    static FaultSchedule of(List<FaultKind> kinds, Duration duration, Duration length, Duration lease, long seed) {
        Duration minimum = minimumDuration(kinds, length, lease);
        if (duration.compareTo(minimum) < 0) {
            throw new IllegalArgumentException("--duration " + Durations.text(duration) + " is too short for "
                    + kinds.size() + " fault(s) of " + Durations.text(length) + ": at least " + Durations.text(minimum)
                    + " (each fault gets its length, " + Durations.text(allowance(lease))
                    + " to recover, and a set-up or restart budget where it needs one)");
        }
        Random random = new Random(seed);
        List<FaultKind> order = new ArrayList<>(kinds);
        Collections.shuffle(order, random);
        long spare = order.isEmpty() ? 0 : duration.minus(minimum).toMillis() / order.size();
        List<Duration> prepare = new ArrayList<>();
        List<Duration> at = new ArrayList<>();
        Duration slotStart = LEAD;
        for (FaultKind k : order) {
            long offset = spare <= 0 ? 0 : random.nextLong(spare);
            Duration p = slotStart.plusMillis(offset);
            prepare.add(p);
            at.add(p.plus(setUp(k)));
            slotStart = slotStart.plus(slot(k, length, lease)).plusMillis(spare);
        }
        List<Entry> out = new ArrayList<>();
        for (int i = 0; i < order.size(); i++) {
            Duration end = i + 1 < order.size() ? prepare.get(i + 1) : duration;
            out.add(new Entry(order.get(i), prepare.get(i), at.get(i), lengthOf(order.get(i), length, lease), end));
        }
        return new FaultSchedule(out, duration);
    }
}
