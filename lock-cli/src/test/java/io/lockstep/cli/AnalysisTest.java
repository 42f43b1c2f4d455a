package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.lockstep.cli.CompareReport.BackendResult;
import io.lockstep.cli.CompareReport.FaultResult;
import io.lockstep.tck.history.Event;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.Event.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The analysis of compare's histories, over synthetic histories (times in milliseconds since the start). */
@DisplayName("compare's analysis of a history")
class AnalysisTest {

    static FaultResult fault(String kind, double start, double end, double windowEnd, boolean tolerated) {
        return new FaultResult(kind, kind, start, start, end, windowEnd, null, "", false, null, null, tolerated, 0, "");
    }

    @Test
    @DisplayName(
            "a kill whose recovery is not seen before the next fault starts says so, never the next fault's figure")
    void recoveryNotSeenBeforeTheNextFaultIsNotANumber() {
        // The review's etcd run: the kill (restart included) ended at 5827 ms, the partition started then,
        // and the next acquisition came at 8012 ms, after the partition.
        List<FaultResult> faults =
                List.of(fault("server-kill", 2685, 5827, 5827, true), fault("partition", 5827, 7828, 12000, true));
        List<FaultResult> measured = Analysis.measure(faults, List.of(1000.0, 2000.0, 8012.0), 12000);
        assertThat(measured.get(0).recoveryMs()).isNull();
        assertThat(measured.get(0).recovery()).isEqualTo(Analysis.NOT_RECOVERED_NEXT);
        assertThat(measured.get(1).recoveryMs()).isCloseTo(184.0, within(0.01));
    }

    @Test
    @DisplayName("recovery is measured from the fault's end to the first acquisition inside its own window")
    void recoveryInsideTheWindow() {
        List<FaultResult> faults =
                List.of(fault("server-kill", 2000, 5000, 8000, true), fault("partition", 8000, 10000, 14000, true));
        List<FaultResult> measured = Analysis.measure(faults, List.of(1000.0, 5150.0, 5200.0, 10020.0), 14000);
        assertThat(measured.get(0).recoveryMs()).isCloseTo(150.0, within(0.01));
        // The longest time without an acquisition inside the kill's window: its start to 5150.
        assertThat(measured.get(0).unavailableMs()).isCloseTo(3150.0, within(0.01));
        assertThat(measured.get(1).recoveryMs()).isCloseTo(20.0, within(0.01));
    }

    @Test
    @DisplayName("a last fault with no acquisition after it says it was not recovered before the run ended")
    void notRecoveredBeforeTheEnd() {
        List<FaultResult> measured =
                Analysis.measure(List.of(fault("partition", 8000, 10000, 12000, true)), List.of(1000.0), 12000);
        assertThat(measured.get(0).recoveryMs()).isNull();
        assertThat(measured.get(0).recovery()).isEqualTo(Analysis.NOT_RECOVERED_END);
        assertThat(measured.get(0).unavailableMs()).isCloseTo(4000.0, within(0.01));
    }

    @Test
    @DisplayName("an overlap under a fault the tier survives breaks the run even when a server kill is scheduled too")
    void eachViolationIsJudgedInItsOwnWindow() {
        List<FaultResult> faults =
                List.of(fault("partition", 2000, 4000, 7000, true), fault("server-kill", 7000, 9000, 12000, false));
        Analysis.Judgement underPartition =
                Analysis.judge(faults, List.of(new Analysis.Finding("overlap", 3000, "OVERLAPPING_HOLDS")));
        assertThat(underPartition.broken()).isTrue();
        assertThat(underPartition.faults().get(0).violations()).isEqualTo(1);

        Analysis.Judgement underKill =
                Analysis.judge(faults, List.of(new Analysis.Finding("overlap", 9500, "OVERLAPPING_HOLDS")));
        assertThat(underKill.broken()).isFalse();
        assertThat(underKill.faults().get(1).violations()).isEqualTo(1);
    }

    @Test
    @DisplayName("fences that went back after a kill the tier does not survive are its consequence, wherever they fall")
    void aResetFenceCounterIsTheKillsConsequence() {
        List<FaultResult> faults =
                List.of(fault("server-kill", 2000, 4000, 7000, false), fault("partition", 7000, 9000, 12000, true));
        Analysis.Judgement later = Analysis.judge(
                faults, List.of(new Analysis.Finding("fence 1 after 300", 8000, "FENCE_NOT_INCREASING")));
        assertThat(later.broken()).isFalse();
        // Counted against the kill that caused it, so the partition's row does not read as unsafe.
        assertThat(later.faults().get(0).violations()).isEqualTo(1);
        assertThat(later.faults().get(1).violations()).isZero();
        // Before any fault: nothing excuses it.
        Analysis.Judgement before =
                Analysis.judge(faults, List.of(new Analysis.Finding("fence 1 after 300", 500, "FENCE_NOT_INCREASING")));
        assertThat(before.broken()).isTrue();
    }

    @Test
    @DisplayName(
            "an overlap under the clock fault is its own and excused; a kill's lasting consequence inside its window stays the kill's; the clock excuses nothing after it")
    void theClockFaultCountsOnlyWhatItCaused() {
        List<FaultResult> faults = List.of(
                fault("server-kill", 2000, 4000, 7000, false),
                fault("clock", 7000, 9000, 12000, false),
                fault("partition", 12000, 14000, 17000, true));
        Analysis.Judgement judged = Analysis.judge(
                faults,
                List.of(
                        new Analysis.Finding("overlap", 8000, "OVERLAPPING_HOLDS"),
                        new Analysis.Finding("fence 1 after 300", 8500, "FENCE_NOT_INCREASING")));
        assertThat(judged.broken()).isFalse();
        assertThat(judged.faults().get(0).violations()).isEqualTo(1);
        assertThat(judged.faults().get(1).violations()).isEqualTo(1);

        List<FaultResult> clockFirst =
                List.of(fault("clock", 2000, 4000, 7000, false), fault("partition", 7000, 9000, 12000, true));
        Analysis.Judgement after =
                Analysis.judge(clockFirst, List.of(new Analysis.Finding("stale write accepted", 8000, "STALE")));
        assertThat(after.broken()).isTrue();
    }

    @Test
    @DisplayName("Jain's index and the min/max share show a barging backend's starved clients")
    void fairnessFigures() {
        // The review's PostgreSQL run: 226, 2, 106 and 6 holds.
        assertThat(Analysis.jainIndex(List.of(226L, 2L, 106L, 6L))).isCloseTo(0.46, within(0.01));
        assertThat(Analysis.minMaxShare(List.of(226L, 2L, 106L, 6L))).isCloseTo(0.0088, within(0.001));
        assertThat(Analysis.jainIndex(List.of(31L, 31L, 31L, 31L))).isEqualTo(1.0);
        assertThat(Analysis.minMaxShare(List.of(109L, 164L, 9L, 0L))).isZero();
    }

    @Test
    @DisplayName("a timeout counts as a wait of its whole wait time, a stale write of a holder as its own count")
    void timeoutsAreWaitsAndZerosMeanMeasured() {
        List<Event> events = new ArrayList<>();
        long ms = 1_000_000;
        // client-1 takes the lock at once and writes; client-2 waits 3 s and gives up; client-1 releases.
        events.add(event(0, "client-1", Op.ACQUIRE, Type.INVOKE, -1, 10 * ms));
        events.add(event(1, "client-2", Op.ACQUIRE, Type.INVOKE, -1, 11 * ms));
        events.add(event(2, "client-1", Op.ACQUIRE, Type.OK, 1, 12 * ms));
        events.add(event(3, "client-1", Op.WRITE, Type.OK, 1, 13 * ms));
        events.add(event(4, "client-2", Op.ACQUIRE, Type.FAIL, -1, 3011 * ms));
        events.add(event(5, "client-1", Op.RELEASE, Type.INVOKE, -1, 3020 * ms));
        events.add(event(6, "client-1", Op.RELEASE, Type.OK, -1, 3021 * ms));
        CompareSettings settings = new CompareSettings(
                Duration.ofSeconds(4),
                2,
                Duration.ofSeconds(1),
                Duration.ofMillis(20),
                Duration.ofSeconds(2),
                List.of(),
                1);
        BackendResult r = Analysis.of(
                new Analysis.Run(
                        "test",
                        "CONSENSUS",
                        "test://",
                        true,
                        false,
                        events,
                        List.of(1_000_000L),
                        new ConcurrentHashMap<>(),
                        List.of(),
                        0,
                        4000 * ms),
                settings);
        assertThat(r.timeouts()).isEqualTo(1);
        assertThat(r.longestWaitMs()).isCloseTo(3000.0, within(0.01));
        assertThat(r.waitP99Ms()).isCloseTo(3000.0, within(0.01));
        assertThat(r.holdsPerClient()).isEqualTo(Map.of("client-1", 1L, "client-2", 0L));
        assertThat(r.staleWrites()).isZero(); // printed as "- / -": nobody wrote after losing the lock
        assertThat(r.uncontendedP50Ms()).isEqualTo(1.0);
        assertThat(Table.render(report(r))).contains("- / -");
    }

    @Test
    @DisplayName("the timeline gets every timed-out and failed acquire, and red marks only the holds a violation is in")
    void failedAttemptsAndViolationsForTheTimeline() {
        long ms = 1_000_000;
        List<Event> events = List.of(
                event(0, "client-1", Op.ACQUIRE, Type.INVOKE, -1, 10 * ms),
                event(1, "client-1", Op.ACQUIRE, Type.OK, 5, 12 * ms),
                event(2, "client-2", Op.ACQUIRE, Type.INVOKE, -1, 13 * ms),
                event(3, "client-3", Op.ACQUIRE, Type.INVOKE, -1, 14 * ms),
                event(4, "client-3", Op.ACQUIRE, Type.UNKNOWN, -1, 50 * ms),
                event(5, "client-2", Op.ACQUIRE, Type.FAIL, -1, 3013 * ms),
                event(6, "client-1", Op.RELEASE, Type.INVOKE, -1, 3020 * ms),
                event(7, "client-1", Op.RELEASE, Type.OK, -1, 3021 * ms),
                event(8, "client-2", Op.ACQUIRE, Type.INVOKE, -1, 3030 * ms),
                // A fence that went back (a restarted Redis): the checker's violation.
                event(9, "client-2", Op.ACQUIRE, Type.OK, 2, 3040 * ms),
                event(10, "client-2", Op.RELEASE, Type.INVOKE, -1, 3060 * ms),
                event(11, "client-2", Op.RELEASE, Type.OK, -1, 3061 * ms),
                event(12, "client-3", Op.ACQUIRE, Type.INVOKE, -1, 3070 * ms),
                event(13, "client-3", Op.ACQUIRE, Type.OK, 6, 3100 * ms));
        CompareSettings settings = new CompareSettings(
                Duration.ofSeconds(4),
                3,
                Duration.ofSeconds(1),
                Duration.ofMillis(20),
                Duration.ofSeconds(2),
                List.of(),
                1);
        BackendResult r = Analysis.of(
                new Analysis.Run(
                        "redis",
                        "BEST_EFFORT",
                        "redis://",
                        true,
                        false,
                        events,
                        List.of(),
                        new ConcurrentHashMap<>(),
                        List.of(),
                        0,
                        4000 * ms),
                settings);
        assertThat(r.fencesNotIncreasing()).isEqualTo(1);
        assertThat(r.failedAttempts())
                .containsExactly(
                        new CompareReport.Attempt("client-3", 14, 50, "error"),
                        new CompareReport.Attempt("client-2", 13, 3013, "timeout"));
        assertThat(r.holds())
                .extracting(CompareReport.Hold::client, CompareReport.Hold::violation, CompareReport.Hold::overlap)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple("client-1", true, false),
                        org.assertj.core.groups.Tuple.tuple("client-2", true, false),
                        org.assertj.core.groups.Tuple.tuple("client-3", false, false));
        // No fault ran, so nothing excuses it; the verdict says not safe in words.
        Verdicts.Verdict verdict = Verdicts.of(r);
        assertThat(verdict.status()).isEqualTo(Verdicts.NOT_SAFE);
        assertThat(verdict.summary()).contains("NOT SAFE outside the faults");
    }

    @Test
    @DisplayName(
            "a verdict under each fault says safe or not, whether the tier claims it, and how long nobody could lock")
    void faultVerdictsInWords() {
        FaultResult kill = new FaultResult(
                "server-kill", "server-kill", 7000, 7000, 9000, 12000, 15.0, "", false, 2100.0, 30.0, false, 3, "");
        FaultResult pause = new FaultResult(
                "holder-pause", "holder-pause", 2000, 2000, 4000, 7000, 718.0, "", true, 718.0, null, true, 0, "");
        FaultResult lost = new FaultResult(
                "partition",
                "partition",
                12000,
                12000,
                14000,
                16000,
                null,
                Analysis.NOT_RECOVERED_END,
                false,
                2000.0,
                null,
                true,
                2,
                "");
        BackendResult r = AnalysisTest.row(List.of(pause, kill, lost));
        assertThat(Verdicts.fault(r, kill))
                .isEqualTo(
                        new Verdicts.FaultVerdict(
                                "server-kill",
                                "server-kill",
                                Verdicts.NOT_CLAIMED,
                                "not safe: 3 violation(s); BEST_EFFORT does not claim to survive server-kill; nobody could"
                                        + " take the lock for up to 2.1 s; a client held it again 15.0 ms after the fault ended"));
        assertThat(Verdicts.fault(r, pause).words())
                .isEqualTo("safe; nobody could take the lock for up to 718 ms; a client held it again 718 ms after"
                        + " the fault began");
        assertThat(Verdicts.fault(r, lost).status()).isEqualTo(Verdicts.NOT_SAFE);
        assertThat(Verdicts.fault(r, lost).words())
                .startsWith("NOT SAFE: 2 violation(s), under a fault BEST_EFFORT claims to survive")
                .endsWith(Analysis.NOT_RECOVERED_END);
        assertThat(Verdicts.of(r).status()).isEqualTo(Verdicts.NOT_SAFE);
    }

    static BackendResult row(List<FaultResult> faults) {
        return new BackendResult(
                "redis",
                "BEST_EFFORT",
                "redis://",
                true,
                null,
                null,
                true,
                100,
                0.5,
                0.5,
                100,
                0,
                300,
                1,
                5,
                28,
                Map.of("client-1", 50L, "client-2", 50L),
                1.0,
                1.0,
                0,
                0,
                0,
                0,
                0,
                0,
                false,
                faults,
                Map.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of());
    }

    @Test
    @DisplayName("a row where no client ever acquired is unavailable, not a row of zeros")
    void noAcquisitionIsUnavailable() {
        long ms = 1_000_000;
        List<Event> events = List.of(
                event(0, "client-1", Op.ACQUIRE, Type.INVOKE, -1, 10 * ms),
                event(1, "client-1", Op.ACQUIRE, Type.UNKNOWN, -1, 20 * ms));
        CompareSettings settings = new CompareSettings(
                Duration.ofSeconds(2),
                1,
                Duration.ofSeconds(1),
                Duration.ofMillis(20),
                Duration.ofSeconds(2),
                List.of(),
                1);
        BackendResult r = Analysis.of(
                new Analysis.Run(
                        "redis",
                        "BEST_EFFORT",
                        "redis://127.0.0.1:1",
                        true,
                        false,
                        events,
                        List.of(),
                        new ConcurrentHashMap<>(),
                        List.of(),
                        0,
                        2000 * ms),
                settings);
        assertThat(r.started()).isFalse();
        String table = Table.render(report(r));
        assertThat(table).contains("UNAVAILABLE").doesNotContain("| 0 |");
    }

    @Test
    @DisplayName("the verdict says where a row was safe, where not and whether its tier claims it, and if it was fair")
    void verdictInWords() {
        FaultResult partition = new FaultResult(
                "partition", "partition", 2000, 2000, 4000, 7000, 20.0, "", false, 2000.0, null, true, 0, "");
        FaultResult kill = new FaultResult(
                "server-kill", "server-kill", 7000, 7000, 9000, 12000, 15.0, "", false, 2100.0, 30.0, false, 3, "");
        BackendResult r = new BackendResult(
                "redis",
                "BEST_EFFORT",
                "redis://",
                true,
                null,
                null,
                true,
                340,
                0.5,
                0.5,
                1200,
                6,
                3000,
                1,
                5,
                28,
                Map.of("client-1", 226L, "client-2", 2L, "client-3", 106L, "client-4", 6L),
                0.0088,
                0.46,
                1,
                0,
                1,
                116,
                0,
                3,
                false,
                List.of(partition, kill),
                Map.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of());
        assertThat(Verdicts.summary(r))
                .contains("safe under partition")
                .contains("server-kill: 3 violations, which BEST_EFFORT does not claim to survive")
                .contains("the real holder's writes refused 116 times")
                .contains("nobody could take the lock for up to 2100 ms (server-kill)")
                .contains("UNFAIR: Jain 0.46");
        FaultResult broken = partition.measured(20.0, "", 2000.0, 2);
        BackendResult etcd = new BackendResult(
                "etcd",
                "CONSENSUS",
                "etcd://",
                true,
                null,
                null,
                true,
                120,
                3,
                80,
                2000,
                0,
                2100,
                8,
                125,
                9,
                Map.of("client-1", 30L, "client-2", 31L),
                0.97,
                1.0,
                0,
                0,
                0,
                0,
                2,
                0,
                true,
                List.of(broken),
                Map.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of());
        assertThat(Verdicts.summary(etcd)).contains("NOT SAFE under partition (2 violations)", "fair (Jain 1.00)");
    }

    @Test
    @DisplayName("--repeat's spread is the median and range of the runs that measured the figure")
    void spreadOverRuns() {
        CompareReport.Spread s = Repeats.spread("redis", "wait p50 ms", List.of(30.0, 10.0, Double.NaN, 20.0), 4);
        assertThat(s.median()).isEqualTo(20.0);
        assertThat(s.min()).isEqualTo(10.0);
        assertThat(s.max()).isEqualTo(30.0);
        assertThat(s.missing()).isEqualTo(1);
        assertThat(Repeats.spread("redis", "x", List.of(1.0, 4.0), 2).median()).isEqualTo(2.5);
        assertThat(Repeats.spread("redis", "x", List.of(), 2).median()).isNaN();
    }

    static CompareReport report(BackendResult r) {
        return new CompareReport(
                "test",
                1,
                "4s",
                2,
                "1s",
                "20ms",
                "2s",
                List.of(),
                List.of(),
                Analysis.EDGES_MS,
                List.of(r),
                false,
                1,
                List.of(),
                Verdicts.of(List.of(r)));
    }

    static Event event(long index, String client, Op op, Type type, long fence, long nanos) {
        return new Event(
                index,
                client,
                "lock",
                op,
                type,
                fence < 0 ? OptionalLong.empty() : OptionalLong.of(fence),
                OptionalLong.empty(),
                nanos);
    }
}
