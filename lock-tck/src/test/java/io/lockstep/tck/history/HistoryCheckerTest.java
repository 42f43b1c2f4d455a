package io.lockstep.tck.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.Event.Type;
import io.lockstep.tck.history.HistoryChecker.Report;
import io.lockstep.tck.history.HistoryChecker.Rule;
import io.lockstep.tck.history.HistoryChecker.Violation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Crafted histories, with times in nanoseconds chosen by hand, that the checker must pass or fail. */
class HistoryCheckerTest {

    private static final String LOCK = "orders";

    private final List<Event> events = new ArrayList<>();

    private Event at(long time, String client, Op op, Type type) {
        return add(time, client, op, type, OptionalLong.empty(), OptionalLong.empty());
    }

    private Event acquired(long time, String client, long fence, long until) {
        return add(time, client, Op.ACQUIRE, Type.OK, OptionalLong.of(fence), OptionalLong.of(until));
    }

    private Event add(long time, String client, Op op, Type type, OptionalLong fence, OptionalLong value) {
        String lock = op == Op.INCREMENT || op == Op.READ ? "counter" : LOCK;
        Event e = new Event(events.size(), client, lock, op, type, fence, value, time);
        events.add(e);
        return e;
    }

    private void hold(String client, long from, long to, long fence) {
        at(from, client, Op.ACQUIRE, Type.INVOKE);
        acquired(from + 1, client, fence, from + 1_000_000);
        at(to, client, Op.RELEASE, Type.INVOKE);
        at(to + 1, client, Op.RELEASE, Type.OK);
    }

    private Report check(HistoryChecker checker) {
        return checker.check(events);
    }

    private static Violation only(Report report, Rule rule) {
        assertThat(report.violations()).as(report.toString()).hasSize(1);
        Violation v = report.violations().get(0);
        assertThat(v.rule()).isEqualTo(rule);
        return v;
    }

    @Nested
    class ValidHistories {

        @Test
        void successiveHoldersWithIncreasingFencesPass() {
            hold("a", 10, 20, 1);
            hold("b", 30, 40, 2);
            hold("a", 50, 60, 5);
            assertThat(check(HistoryChecker.strict()).violations()).isEmpty();
        }

        @Test
        void aHoldEndsWhenItsValidityRunsOutEvenWithoutARelease() {
            at(10, "a", Op.ACQUIRE, Type.INVOKE);
            acquired(11, "a", 1, 100);
            at(150, "b", Op.ACQUIRE, Type.INVOKE);
            acquired(151, "b", 2, 300);
            // a wakes up late and learns it lost the lease: it never overlapped b's hold.
            at(200, "a", Op.LOST, Type.OK);
            assertThat(check(HistoryChecker.strict()).violations()).isEmpty();
        }

        @Test
        void anAcquireThatFindsTheLockHeldByAnotherPasses() {
            at(10, "a", Op.ACQUIRE, Type.INVOKE);
            acquired(11, "a", 1, 1_000);
            at(20, "b", Op.ACQUIRE, Type.INVOKE);
            at(30, "b", Op.ACQUIRE, Type.FAIL);
            at(40, "a", Op.RELEASE, Type.INVOKE);
            at(41, "a", Op.RELEASE, Type.OK);
            assertThat(check(HistoryChecker.strict()).violations()).isEmpty();
        }

        @Test
        void anAcquireRacingAnotherAttemptMayFindTheLockHeld() {
            at(10, "a", Op.ACQUIRE, Type.INVOKE);
            at(12, "b", Op.ACQUIRE, Type.INVOKE);
            at(14, "b", Op.ACQUIRE, Type.FAIL);
            at(16, "a", Op.ACQUIRE, Type.FAIL);
            assertThat(check(HistoryChecker.strict()).violations()).isEmpty();
        }

        @Test
        void aLeftoverWithinTheAllowanceAfterAnUnknownOutcomePasses() {
            at(10, "a", Op.ACQUIRE, Type.INVOKE);
            at(20, "a", Op.ACQUIRE, Type.UNKNOWN);
            at(50, "b", Op.ACQUIRE, Type.INVOKE);
            at(60, "b", Op.ACQUIRE, Type.FAIL);
            HistoryChecker checker = HistoryChecker.strict().leftoverAllowance(Duration.ZERO, Duration.ofNanos(100));
            assertThat(check(checker).violations()).isEmpty();
            // Without an allowance, an unknown outcome is never judged.
            assertThat(check(HistoryChecker.strict()).violations()).isEmpty();
        }

        @Test
        void aLockFoundHeldAfterAReleaseWithAnUnknownOutcomeIsJudgedOnlyPastTheAllowance() {
            at(10, "a", Op.ACQUIRE, Type.INVOKE);
            acquired(11, "a", 1, 1_000);
            at(20, "a", Op.RELEASE, Type.INVOKE);
            at(30, "a", Op.RELEASE, Type.UNKNOWN); // e.g. refused until its retries ran out
            at(500, "b", Op.ACQUIRE, Type.INVOKE);
            at(510, "b", Op.ACQUIRE, Type.FAIL);
            at(1_500, "c", Op.ACQUIRE, Type.INVOKE);
            Event late = at(1_510, "c", Op.ACQUIRE, Type.FAIL);
            // Without an allowance the lock may be held for ever after it; with one, until a's validity
            // (1,000) and the allowance have run out: b's finding is within them, c's is not.
            assertThat(check(HistoryChecker.strict()).violations()).isEmpty();
            Violation v = only(
                    check(HistoryChecker.strict().leftoverAllowance(Duration.ZERO, Duration.ofNanos(100))),
                    Rule.LEFTOVER_LOCK);
            assertThat(v.second()).isEqualTo(late);
        }

        @Test
        void acknowledgedIncrementsMatchTheFinalRead() {
            for (int i = 0; i < 3; i++) {
                at(10 + i * 10, "a", Op.INCREMENT, Type.INVOKE);
                at(11 + i * 10, "a", Op.INCREMENT, Type.OK);
            }
            at(50, "b", Op.INCREMENT, Type.INVOKE);
            at(51, "b", Op.INCREMENT, Type.UNKNOWN);
            add(100, "c", Op.READ, Type.OK, OptionalLong.empty(), OptionalLong.of(4));
            assertThat(check(HistoryChecker.strict()).violations()).isEmpty();
        }

        @Test
        void overlapsAreNotReportedWhenAllowed() {
            hold("a", 10, 50, 1);
            hold("b", 20, 60, 2);
            assertThat(check(HistoryChecker.strict().allowingOverlaps()).violations())
                    .isEmpty();
        }

        @Test
        void fencesAreNotCheckedWhenTheProviderDoesNotClaimThem() {
            hold("a", 10, 20, 7);
            hold("b", 30, 40, 7);
            assertThat(check(HistoryChecker.strict().withoutFences()).violations())
                    .isEmpty();
        }
    }

    @Nested
    class BrokenHistories {

        @Test
        void overlappingHoldsNameBothAcquires() {
            at(10, "a", Op.ACQUIRE, Type.INVOKE);
            Event first = acquired(11, "a", 1, 1_000);
            at(20, "b", Op.ACQUIRE, Type.INVOKE);
            Event second = acquired(21, "b", 2, 1_000);

            Report report = check(HistoryChecker.strict());

            Violation v = only(report, Rule.OVERLAPPING_HOLDS);
            assertThat(v.first()).isEqualTo(first);
            assertThat(v.second()).isEqualTo(second);
            assertThat(report.toString()).contains(first.toString()).contains(second.toString());
            assertThatThrownBy(report::assertValid)
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("OVERLAPPING_HOLDS")
                    .hasMessageContaining(first.toString())
                    .hasMessageContaining(second.toString());
        }

        @Test
        void aReleaseThatWasStillInFlightDoesNotEndTheHoldBeforeItWasSent() {
            at(10, "a", Op.ACQUIRE, Type.INVOKE);
            Event first = acquired(11, "a", 1, 1_000);
            at(20, "b", Op.ACQUIRE, Type.INVOKE);
            Event second = acquired(21, "b", 2, 1_000);
            at(30, "a", Op.RELEASE, Type.INVOKE);
            at(31, "a", Op.RELEASE, Type.FAIL);

            Violation v = only(check(HistoryChecker.strict()), Rule.OVERLAPPING_HOLDS);
            assertThat(List.of(v.first(), v.second())).containsExactly(first, second);
        }

        @Test
        void aRepeatedFenceNamesBothHolders() {
            hold("a", 10, 20, 4);
            hold("b", 30, 40, 4);
            Event a = events.get(1);
            Event b = events.get(5);

            Violation v = only(check(HistoryChecker.strict()), Rule.FENCE_NOT_INCREASING);

            assertThat(v.first()).isEqualTo(a);
            assertThat(v.second()).isEqualTo(b);
            assertThat(v.message()).contains("fence 4").contains("a").contains("b");
        }

        @Test
        void aDecreasingFenceIsReportedAgainstTheHighestEarlierOne() {
            hold("a", 10, 20, 9);
            hold("b", 30, 40, 3);
            hold("c", 50, 60, 5);
            Event highest = events.get(1);
            Report report = check(HistoryChecker.strict());
            assertThat(report.violations()).hasSize(2).allSatisfy(v -> {
                assertThat(v.rule()).isEqualTo(Rule.FENCE_NOT_INCREASING);
                assertThat(v.first()).isEqualTo(highest);
            });
        }

        @Test
        void aLockLeftBehindByAFailedAcquireNamesItAndTheAcquireThatFoundIt() {
            at(10, "a", Op.ACQUIRE, Type.INVOKE);
            Event failed = at(20, "a", Op.ACQUIRE, Type.UNKNOWN); // e.g. the backend timed out
            at(500, "b", Op.ACQUIRE, Type.INVOKE);
            Event found = at(510, "b", Op.ACQUIRE, Type.FAIL);

            Report report = check(HistoryChecker.strict().leftoverAllowance(Duration.ZERO, Duration.ofNanos(100)));

            Violation v = only(report, Rule.LEFTOVER_LOCK);
            assertThat(v.first()).isEqualTo(failed);
            assertThat(v.second()).isEqualTo(found);
        }

        @Test
        void aReleaseThatDidNotFreeTheLockIsNamed() {
            hold("a", 10, 20, 1);
            Event released = events.get(3);
            at(30, "b", Op.ACQUIRE, Type.INVOKE);
            Event found = at(40, "b", Op.ACQUIRE, Type.FAIL);

            Violation v = only(check(HistoryChecker.strict()), Rule.LEFTOVER_LOCK);

            assertThat(v.first()).isEqualTo(released);
            assertThat(v.second()).isEqualTo(found);
        }

        @Test
        void aLockFoundHeldWhenNobodyEverTookItIsReported() {
            Event invoke = at(10, "b", Op.ACQUIRE, Type.INVOKE);
            Event found = at(20, "b", Op.ACQUIRE, Type.FAIL);
            Violation v = only(check(HistoryChecker.strict()), Rule.LEFTOVER_LOCK);
            assertThat(v.first()).isEqualTo(invoke);
            assertThat(v.second()).isEqualTo(found);
        }

        @Test
        void aStaleWriteAcceptedNamesTheNewerWriteAndTheStaleOne() {
            Event newer = add(10, "b", Op.WRITE, Type.OK, OptionalLong.of(7), OptionalLong.empty());
            add(15, "c", Op.WRITE, Type.FAIL, OptionalLong.of(3), OptionalLong.empty());
            Event stale = add(20, "a", Op.WRITE, Type.OK, OptionalLong.of(5), OptionalLong.empty());

            Violation v = only(check(HistoryChecker.strict()), Rule.STALE_WRITE_ACCEPTED);

            assertThat(v.first()).isEqualTo(newer);
            assertThat(v.second()).isEqualTo(stale);
        }

        @Test
        void lostIncrementsNameTheLastAcknowledgedOneAndTheRead() {
            at(10, "a", Op.INCREMENT, Type.INVOKE);
            at(11, "a", Op.INCREMENT, Type.OK);
            at(20, "b", Op.INCREMENT, Type.INVOKE);
            Event lastAck = at(21, "b", Op.INCREMENT, Type.OK);
            Event read = add(30, "c", Op.READ, Type.OK, OptionalLong.empty(), OptionalLong.of(1));

            Violation v = only(check(HistoryChecker.strict()), Rule.COUNT_MISMATCH);

            assertThat(v.first()).isEqualTo(lastAck);
            assertThat(v.second()).isEqualTo(read);
            assertThat(v.message()).contains("read 1").contains("2 increments were acknowledged");
        }

        @Test
        void moreIncrementsThanMadeAreReported() {
            at(10, "a", Op.INCREMENT, Type.INVOKE);
            at(11, "a", Op.INCREMENT, Type.OK);
            add(30, "c", Op.READ, Type.OK, OptionalLong.empty(), OptionalLong.of(2));
            only(check(HistoryChecker.strict()), Rule.COUNT_MISMATCH);
        }
    }

    @Nested
    class Recording {

        @Test
        void eventsFromAnotherJvmAreAppendedAsLinesKeepingTheirTime() {
            History history = new History();
            Event original = new Event(
                    0,
                    "child 1",
                    "a lock/with spaces",
                    Op.ACQUIRE,
                    Type.OK,
                    OptionalLong.of(3),
                    OptionalLong.empty(),
                    42);

            Event appended = history.append(original.toLine());

            assertThat(appended).isEqualTo(original);
            assertThat(history.events()).containsExactly(original);
        }

        @Test
        void aMalformedLineIsRejectedNamingIt() {
            History history = new History();
            assertThatThrownBy(() -> history.append("EVENT a b NOPE OK - - 1"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("EVENT a b NOPE OK - - 1");
            assertThatThrownBy(() -> history.append("ACQUIRED 3"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("ACQUIRED 3");
        }

        @Test
        void recordersTimeEventsOnTheHistorysClock() {
            long[] now = {100};
            History history = new History(() -> now[0]);
            History.Recorder a = history.client("a");
            a.invoke(Op.ACQUIRE, LOCK);
            now[0] = 200;
            a.fail(Op.ACQUIRE, LOCK);
            assertThat(history.events()).extracting(Event::nanoTime).containsExactly(100L, 200L);
            assertThat(HistoryChecker.strict().check(history).violations())
                    .extracting(Violation::rule)
                    .containsExactly(Rule.LEFTOVER_LOCK);
        }
    }
}
