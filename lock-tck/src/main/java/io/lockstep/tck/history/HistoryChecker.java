package io.lockstep.tck.history;

import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.Event.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Checks a {@link History} against what a lock promises, and names the two events that break a promise.
 *
 * <ul>
 *   <li>{@link Rule#OVERLAPPING_HOLDS}: no two holds of one lock overlap. A hold counts from the acquire's
 *       OK until the holder invokes a release, learns the lease was lost, fails to extend it, or its
 *       validity runs out ({@link Event#value()} of the acquire or the last extend), whichever is first.
 *       Only holds that certainly overlap are reported.
 *   <li>{@link Rule#FENCE_NOT_INCREASING}: each holder's fence is greater than every earlier holder's.
 *   <li>{@link Rule#LEFTOVER_LOCK}: an acquire that found the lock held (FAIL) while no other attempt or
 *       hold could have held it: something left the lock behind, such as a failed acquire or a release
 *       that did not free it.
 *   <li>{@link Rule#STALE_WRITE_ACCEPTED}: a write accepted with a fence lower than one accepted before.
 *   <li>{@link Rule#COUNT_MISMATCH}: a final read of a counter differs from the increments that were
 *       acknowledged (OK) before it, allowing only for those whose outcome is unknown.
 * </ul>
 *
 * <p>Each client performs one operation at a time on each lock: an invoke's outcome is the client's next
 * completion for the same operation and lock. Immutable and thread-safe.
 */
public final class HistoryChecker {

    /** A promise the checker checks. */
    public enum Rule {
        /** Two clients held the same lock at the same time. */
        OVERLAPPING_HOLDS,
        /** A later holder's fence was not greater than an earlier holder's. */
        FENCE_NOT_INCREASING,
        /** The lock was found held when nothing could hold it. */
        LEFTOVER_LOCK,
        /** A fenced resource accepted a write older than one it had accepted. */
        STALE_WRITE_ACCEPTED,
        /** A counter's final value differs from the acknowledged increments. */
        COUNT_MISMATCH
    }

    /**
     * A broken promise.
     *
     * @param rule which promise
     * @param first the earlier of the two events that break it
     * @param second the later one
     * @param message what happened, naming both events
     */
    public record Violation(Rule rule, Event first, Event second, String message) {
        /** Checks the fields. */
        public Violation {
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(first, "first");
            Objects.requireNonNull(second, "second");
            Objects.requireNonNull(message, "message");
        }

        @Override
        public String toString() {
            return rule + ": " + message + "\n    first:  " + first + "\n    second: " + second;
        }
    }

    /**
     * What a check found.
     *
     * @param violations the broken promises, in the order found
     * @param events how many events were checked
     */
    public record Report(List<Violation> violations, int events) {
        /** Copies the list. */
        public Report {
            violations = List.copyOf(violations);
        }

        /** Whether every promise held. */
        public boolean isValid() {
            return violations.isEmpty();
        }

        /**
         * Throws an {@link AssertionError} with this report unless every promise held.
         *
         * @throws AssertionError naming each violation's two events
         */
        public void assertValid() {
            if (!isValid()) {
                throw new AssertionError(toString());
            }
        }

        @Override
        public String toString() {
            if (isValid()) {
                return "history of " + events + " events is valid";
            }
            StringBuilder out = new StringBuilder()
                    .append("history of ")
                    .append(events)
                    .append(" events breaks ")
                    .append(violations.size())
                    .append(violations.size() == 1 ? " promise:" : " promises:");
            for (Violation v : violations) {
                out.append("\n  ").append(v);
            }
            return out.toString();
        }
    }

    private final boolean checkOverlaps;
    private final boolean checkFences;
    private final @Nullable Duration afterFailedAcquire;
    private final @Nullable Duration afterUnknownAcquire;

    private HistoryChecker(
            boolean checkOverlaps,
            boolean checkFences,
            @Nullable Duration afterFailedAcquire,
            @Nullable Duration afterUnknownAcquire) {
        this.checkOverlaps = checkOverlaps;
        this.checkFences = checkFences;
        this.afterFailedAcquire = afterFailedAcquire;
        this.afterUnknownAcquire = afterUnknownAcquire;
    }

    /**
     * A checker of every rule. A failed acquire or a completed release may keep the lock for no time at
     * all; an acquire with an unknown outcome, a release with an unknown outcome, or a hold that ended by
     * expiry or loss rather than a release, for ever (leftovers after it are not judged) until {@link
     * #leftoverAllowance} says otherwise.
     */
    public static HistoryChecker strict() {
        return new HistoryChecker(true, true, Duration.ZERO, null);
    }

    /**
     * The same checker, with overlapping holds not reported: for histories under faults that the
     * provider does not claim to tolerate (its tier), where only the other promises must hold.
     */
    public HistoryChecker allowingOverlaps() {
        return new HistoryChecker(false, checkFences, afterFailedAcquire, afterUnknownAcquire);
    }

    /** The same checker, without the fence rule: for providers that do not claim fencing. */
    public HistoryChecker withoutFences() {
        return new HistoryChecker(checkOverlaps, false, afterFailedAcquire, afterUnknownAcquire);
    }

    /**
     * The same checker, allowing the lock to stay taken for {@code afterFailed} after an acquire that
     * failed or a release that completed (cleanup latency), and for {@code afterUnknown} after an acquire
     * whose outcome is unknown or a hold that ended by expiry or loss (typically the lease time plus a
     * margin: the lock may have been granted and is left to expire on the backend).
     */
    public HistoryChecker leftoverAllowance(Duration afterFailed, Duration afterUnknown) {
        requireNonNegative("afterFailed", afterFailed);
        requireNonNegative("afterUnknown", afterUnknown);
        return new HistoryChecker(checkOverlaps, checkFences, afterFailed, afterUnknown);
    }

    /** Checks {@code history}. */
    public Report check(History history) {
        return check(history.events());
    }

    /** Checks {@code events} (in any order; they are sorted by time, then index). */
    public Report check(List<Event> events) {
        List<Event> sorted = new ArrayList<>(events);
        sorted.sort(Comparator.comparingLong(Event::nanoTime).thenComparingLong(Event::index));
        List<Violation> out = new ArrayList<>();
        Map<String, List<Attempt>> attemptsByLock = attempts(sorted);
        for (List<Attempt> attempts : attemptsByLock.values()) {
            List<Attempt> holds = attempts.stream().filter(Attempt::granted).toList();
            if (checkOverlaps) {
                overlaps(holds, out);
            }
            if (checkFences) {
                fences(holds, out);
            }
            leftovers(attempts, out);
        }
        if (checkFences) {
            staleWrites(sorted, out);
        }
        counts(sorted, out);
        return new Report(out, sorted.size());
    }

    /** One acquire attempt and, if granted, its hold. */
    private static final class Attempt {
        final Event invoke;

        @Nullable
        Event outcome;
        /** Certain hold: from the OK until {@link #holdEnd}; only if granted. */
        long holdEnd = Long.MAX_VALUE;

        @Nullable
        Event holdEndEvent;
        /** The hold's validity when its release was sent (the acquire's or the last extend's deadline). */
        long validUntil = Long.MAX_VALUE;
        /** Possible hold: from the invoke until {@link #possibleEnd} (before any allowance). */
        long possibleEnd = Long.MAX_VALUE;

        @Nullable
        Event possibleEndEvent;

        /** Ended by expiry or loss: the backend may keep the lock a little past the client's deadline. */
        boolean endedWithoutRelease;

        Attempt(Event invoke) {
            this.invoke = invoke;
        }

        boolean granted() {
            return outcome != null && outcome.type() == Type.OK;
        }

        Event lastEvent() {
            if (possibleEndEvent != null) {
                return possibleEndEvent;
            }
            return outcome != null ? outcome : invoke;
        }
    }

    private static Map<String, List<Attempt>> attempts(List<Event> sorted) {
        Map<String, List<Attempt>> byLock = new LinkedHashMap<>();
        // The client's current attempt on a lock: waiting for its outcome, or holding.
        Map<String, Attempt> current = new HashMap<>();
        for (Event e : sorted) {
            String key = e.client() + '\u0000' + e.lock();
            Attempt a = current.get(key);
            switch (e.op()) {
                case ACQUIRE -> {
                    if (e.type() == Type.INVOKE) {
                        if (a != null && a.granted()) {
                            endHold(a, e, e.nanoTime(), e.nanoTime());
                        }
                        Attempt next = new Attempt(e);
                        byLock.computeIfAbsent(e.lock(), k -> new ArrayList<>()).add(next);
                        current.put(key, next);
                    } else if (a != null && a.outcome == null) {
                        a.outcome = e;
                        if (e.type() == Type.OK) {
                            a.holdEnd = e.value().isPresent() ? e.value().getAsLong() : Long.MAX_VALUE;
                        } else {
                            a.possibleEnd = e.nanoTime();
                            a.possibleEndEvent = e;
                            current.remove(key);
                        }
                    }
                }
                case EXTEND -> {
                    if (a != null && a.granted() && a.holdEndEvent == null) {
                        if (e.type() == Type.OK && e.value().isPresent() && e.nanoTime() < a.holdEnd) {
                            a.holdEnd = Math.max(a.holdEnd, e.value().getAsLong());
                        } else if (e.type() == Type.FAIL) {
                            endHold(a, e, e.nanoTime(), e.nanoTime());
                            a.endedWithoutRelease = true;
                            current.remove(key);
                        }
                    }
                }
                case LOST -> {
                    // Ignored while a release is in flight: that release's outcome ends the hold.
                    if (a != null && a.granted() && a.holdEndEvent == null) {
                        endHold(a, e, e.nanoTime(), e.nanoTime());
                        a.endedWithoutRelease = true;
                        current.remove(key);
                    }
                }
                case RELEASE -> {
                    if (a != null && a.granted()) {
                        if (e.type() == Type.INVOKE) {
                            // Certainly held until the release was sent; possibly until it completed.
                            a.validUntil = a.holdEnd;
                            endHold(a, e, e.nanoTime(), Long.MAX_VALUE);
                        } else {
                            a.possibleEndEvent = e;
                            if (e.type() == Type.UNKNOWN) {
                                // A release whose outcome is unknown may have left the lock held until its
                                // validity ran out: judged like a hold that ended without a release.
                                a.possibleEnd = Math.max(e.nanoTime(), a.validUntil);
                                a.endedWithoutRelease = true;
                            } else {
                                a.possibleEnd = e.nanoTime();
                            }
                            current.remove(key);
                        }
                    }
                }
                default -> {
                    // Writes, increments and reads are checked separately.
                }
            }
        }
        // A hold that ran out of validity without an event ends at its deadline, possibly a bit later.
        for (List<Attempt> attempts : byLock.values()) {
            for (Attempt a : attempts) {
                if (a.granted() && a.holdEndEvent == null && a.possibleEnd == Long.MAX_VALUE) {
                    a.possibleEnd = a.holdEnd;
                    a.endedWithoutRelease = true;
                }
            }
        }
        return byLock;
    }

    private static void endHold(Attempt a, Event e, long certainEnd, long possibleEnd) {
        if (a.holdEndEvent == null) {
            a.holdEnd = Math.min(a.holdEnd, certainEnd);
            a.holdEndEvent = e;
            if (possibleEnd != Long.MAX_VALUE) {
                a.possibleEnd = possibleEnd;
                a.possibleEndEvent = e;
            }
        }
    }

    private static void overlaps(List<Attempt> holds, List<Violation> out) {
        List<Attempt> byStart = new ArrayList<>(holds);
        byStart.sort(Comparator.comparingLong(a -> okOf(a).nanoTime()));
        for (int i = 0; i < byStart.size(); i++) {
            Attempt later = byStart.get(i);
            long start = okOf(later).nanoTime();
            for (int j = 0; j < i; j++) {
                Attempt earlier = byStart.get(j);
                if (earlier.holdEnd > start && later.holdEnd > start) {
                    Event first = okOf(earlier);
                    Event second = okOf(later);
                    out.add(new Violation(
                            Rule.OVERLAPPING_HOLDS,
                            first,
                            second,
                            second.client() + " acquired lock '" + second.lock() + "' while " + first.client()
                                    + " still held it"
                                    + (earlier.holdEndEvent == null
                                            ? (earlier.holdEnd == Long.MAX_VALUE
                                                    ? " (it never released it)"
                                                    : " (its validity ran until " + earlier.holdEnd + " ns)")
                                            : " (until " + earlier.holdEndEvent + ")")));
                    break; // one report per later hold is enough
                }
            }
        }
    }

    private static void fences(List<Attempt> holds, List<Violation> out) {
        List<Event> oks = holds.stream()
                .map(HistoryChecker::okOf)
                .filter(e -> e.fence().isPresent())
                .sorted(Comparator.comparingLong(Event::nanoTime).thenComparingLong(Event::index))
                .toList();
        Event highest = null;
        for (Event e : oks) {
            if (highest != null && e.fence().getAsLong() <= highest.fence().getAsLong()) {
                out.add(new Violation(
                        Rule.FENCE_NOT_INCREASING,
                        highest,
                        e,
                        e.client() + " got fence " + e.fence().getAsLong() + " for lock '" + e.lock()
                                + "', not greater than fence " + highest.fence().getAsLong() + " given earlier to "
                                + highest.client()));
            }
            if (highest == null || e.fence().getAsLong() > highest.fence().getAsLong()) {
                highest = e;
            }
        }
    }

    private void leftovers(List<Attempt> attempts, List<Violation> out) {
        for (Attempt busy : attempts) {
            Event found = busy.outcome;
            if (found == null || found.type() != Type.FAIL) {
                continue;
            }
            long from = busy.invoke.nanoTime();
            long to = found.nanoTime();
            boolean explained = false;
            Attempt latestBefore = null;
            for (Attempt other : attempts) {
                if (other == busy) {
                    continue;
                }
                long end = possibleEndWithAllowance(other);
                if (other.invoke.nanoTime() < to && end > from) {
                    explained = true;
                    break;
                }
                if (end <= from
                        && (latestBefore == null
                                || latestBefore.lastEvent().nanoTime()
                                        < other.lastEvent().nanoTime())) {
                    latestBefore = other;
                }
            }
            if (!explained) {
                Event culprit = latestBefore == null ? busy.invoke : latestBefore.lastEvent();
                out.add(new Violation(
                        Rule.LEFTOVER_LOCK,
                        culprit,
                        found,
                        found.client() + " found lock '" + found.lock() + "' held when no one could hold it"
                                + (latestBefore == null
                                        ? " (no one had tried to take it)"
                                        : "; the last to touch it before was " + culprit)));
            }
        }
    }

    private long possibleEndWithAllowance(Attempt a) {
        if (a.outcome == null) {
            return Long.MAX_VALUE; // still in flight when the history ended
        }
        Duration allowance =
                switch (a.outcome.type()) {
                    case OK -> a.endedWithoutRelease ? afterUnknownAcquire : afterFailedAcquire;
                    case FAIL -> afterFailedAcquire;
                    case UNKNOWN -> afterUnknownAcquire;
                    case INVOKE -> null;
                };
        if (allowance == null || a.possibleEnd == Long.MAX_VALUE) {
            return Long.MAX_VALUE;
        }
        return saturatedAdd(a.possibleEnd, allowance.toNanos());
    }

    private static void staleWrites(List<Event> sorted, List<Violation> out) {
        Map<String, Event> highest = new HashMap<>();
        for (Event e : sorted) {
            if (e.op() != Op.WRITE || e.type() != Type.OK || e.fence().isEmpty()) {
                continue;
            }
            Event top = highest.get(e.lock());
            if (top != null && e.fence().getAsLong() < top.fence().getAsLong()) {
                out.add(new Violation(
                        Rule.STALE_WRITE_ACCEPTED,
                        top,
                        e,
                        "'" + e.lock() + "' accepted " + e.client() + "'s write with fence "
                                + e.fence().getAsLong() + " after accepting fence "
                                + top.fence().getAsLong() + " from " + top.client()));
            } else {
                highest.put(e.lock(), e);
            }
        }
    }

    private static void counts(List<Event> sorted, List<Violation> out) {
        Map<String, Event> lastRead = new LinkedHashMap<>();
        for (Event e : sorted) {
            if (e.op() == Op.READ && e.type() == Type.OK && e.value().isPresent()) {
                lastRead.put(e.lock(), e);
            }
        }
        for (Event read : lastRead.values()) {
            long acknowledged = 0;
            long unknown = 0;
            Event lastAck = null;
            Map<String, Event> pending = new HashMap<>();
            for (Event e : sorted) {
                if (e.nanoTime() > read.nanoTime()) {
                    break;
                }
                if (e.op() != Op.INCREMENT || !e.lock().equals(read.lock())) {
                    continue;
                }
                switch (e.type()) {
                    case INVOKE -> pending.put(e.client(), e);
                    case OK -> {
                        acknowledged++;
                        lastAck = e;
                        pending.remove(e.client());
                    }
                    case UNKNOWN -> {
                        unknown++;
                        pending.remove(e.client());
                    }
                    case FAIL -> pending.remove(e.client());
                }
            }
            unknown += pending.size(); // still in flight at the read: may or may not be counted
            long value = read.value().getAsLong();
            if (value < acknowledged || value > acknowledged + unknown) {
                out.add(new Violation(
                        Rule.COUNT_MISMATCH,
                        lastAck == null ? read : lastAck,
                        read,
                        "counter '" + read.lock() + "' read " + value + " but " + acknowledged
                                + " increments were acknowledged"
                                + (unknown == 0 ? "" : " and " + unknown + " had unknown outcomes")
                                + (value < acknowledged
                                        ? ": " + (acknowledged - value) + " acknowledged increments were lost"
                                        : ": more increments than were made")));
            }
        }
    }

    private static Event okOf(Attempt a) {
        return Objects.requireNonNull(a.outcome, "outcome");
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }

    private static void requireNonNegative(String field, Duration d) {
        Objects.requireNonNull(d, field);
        if (d.isNegative()) {
            throw new IllegalArgumentException(field + " must not be negative, was " + d);
        }
    }
}
