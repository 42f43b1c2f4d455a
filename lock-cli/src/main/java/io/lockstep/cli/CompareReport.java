package io.lockstep.cli;

import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What {@code compare} measured, as printed, written by {@code --json} and drawn by {@code --report}.
 * Times in the timeline are milliseconds since the backend's run started. A figure that was not measured
 * (nothing happened that it counts) is {@code null}, printed as {@code -}.
 *
 * @param interrupted whether Ctrl-C ended the run early: the figures are those measured until then
 * @param runs how many times the comparison ran ({@code --repeat}); {@code backends} is the last run
 * @param spread with more than one run, each figure's median and range over the runs
 * @param verdicts "which backend, and why": one per row, in the words the table prints
 */
record CompareReport(
        String version,
        long seed,
        String duration,
        int clients,
        String leaseTime,
        String holdTime,
        String faultLength,
        List<String> faults,
        List<ScheduledFault> schedule,
        List<Double> histogramEdgesMs,
        List<BackendResult> backends,
        boolean interrupted,
        int runs,
        List<Spread> spread,
        List<Verdicts.Verdict> verdicts) {

    /** The same report with its verdicts worked out again from its rows (a saved run re-rendered). */
    CompareReport withVerdicts() {
        return new CompareReport(
                version,
                seed,
                duration,
                clients,
                leaseTime,
                holdTime,
                faultLength,
                faults,
                schedule,
                histogramEdgesMs,
                backends,
                interrupted,
                runs,
                spread == null ? List.of() : spread,
                Verdicts.of(backends));
    }

    /**
     * One figure over {@code --repeat} runs: its median, least and most value, and in how many runs it was not
     * measured (a backend unavailable, a fault not recovered in its window).
     */
    record Spread(String backend, String figure, double median, double min, double max, int missing) {}

    /** A fault of the shared schedule, the same on every row: when it is due and when its window ends. */
    record ScheduledFault(String kind, double startMs, double lengthMs, double windowEndMs) {}

    /**
     * One backend's row, timeline and histogram.
     *
     * @param uncontendedP50Ms acquire latency with nobody else contending (one client, before the workload)
     * @param waitP50Ms acquire latency under contention, queueing included; timeouts count as their wait
     * @param timeouts acquires that gave up after the wait time
     * @param longestWaitMs the longest any client waited for one acquire (a timeout's wait included)
     * @param holdsPerClient acquisitions per worker client
     * @param minMaxShare the fewest holds of a client divided by the most ({@code 1} is even)
     * @param jainIndex Jain's fairness index of the holds per client, from {@code 1/n} (one client got all)
     *     to {@code 1} (even)
     * @param staleWrites writes by a client that was no longer the latest holder (the frozen holder's, a
     *     partitioned holder's); the two counts below split them
     * @param ownWritesRefused writes by the current holder that the fenced register refused (fences went
     *     back: Redis after a restart without fsync); the resource is blocked for the real holder
     * @param failedAttempts acquires that timed out or failed with an error, for the timeline (at most 4000)
     */
    record BackendResult(
            String backend,
            String tier,
            String uri,
            boolean started,
            @Nullable String unavailableReason,
            @Nullable String install,
            boolean fencing,
            long acquisitions,
            double uncontendedP50Ms,
            double waitP50Ms,
            double waitP99Ms,
            long timeouts,
            double longestWaitMs,
            double handoffP50Ms,
            double handoffP99Ms,
            double throughputPerS,
            Map<String, Long> holdsPerClient,
            double minMaxShare,
            double jainIndex,
            long staleWrites,
            long staleWritesAccepted,
            long staleWritesRejectedByFence,
            long ownWritesRefused,
            long overlappingHolds,
            long fencesNotIncreasing,
            boolean invariantBroken,
            List<FaultResult> faults,
            Map<String, Long> errors,
            List<Hold> holds,
            List<Attempt> failedAttempts,
            List<Long> acquireHistogram,
            List<String> violations) {}

    /**
     * A fault as it happened on one row, and what it cost.
     *
     * @param kind the scheduled fault (the same on every backend, e.g. {@code server-kill})
     * @param label what it was on this backend (e.g. {@code failover} on Redis Sentinel, {@code leader-kill}
     *     on a cluster; else the kind)
     * @param scheduledStartMs when the schedule put it
     * @param startMs when it actually started; {@code endMs} when it was lifted (a killed server: when it
     *     answered again)
     * @param windowEndMs where its window ends: the next fault's set-up, or the end of the run
     * @param recoveryMs from the end of the fault (from its start for a frozen holder, a failover or a leader
     *     fault, which the backend is meant to ride through) until a worker held the lock again, if that
     *     happened inside this fault's window; else {@code null} and {@code recovery} says why
     * @param recovery empty when measured; else why not ("not recovered before the next fault", "skipped ...")
     * @param recoveryFromStart whether recovery counts from the fault's start (a frozen holder, a failover, a
     *     leader fault) rather than from its end
     * @param unavailableMs the longest time inside the window during which no client acquired the lock
     * @param restartMs for a killed server, from the restart command until it answered
     * @param tolerated whether the tier claims to survive this fault: a violation inside its window exits 1
     * @param violations checker violations and stale writes accepted counted against it: inside its window,
     *     or for a fault its tier does not claim to survive, their lasting consequences (fences reset)
     */
    record FaultResult(
            String kind,
            String label,
            double scheduledStartMs,
            double startMs,
            double endMs,
            double windowEndMs,
            @Nullable Double recoveryMs,
            String recovery,
            boolean recoveryFromStart,
            @Nullable Double unavailableMs,
            @Nullable Double restartMs,
            boolean tolerated,
            long violations,
            String note) {

        /** The same fault with its measured recovery, unavailability and violations. */
        FaultResult measured(
                @Nullable Double recoveryMs, String recovery, @Nullable Double unavailableMs, long violations) {
            return new FaultResult(
                    kind,
                    label,
                    scheduledStartMs,
                    startMs,
                    endMs,
                    windowEndMs,
                    recoveryMs,
                    recovery,
                    recoveryFromStart,
                    unavailableMs,
                    restartMs,
                    tolerated,
                    violations,
                    note);
        }

        boolean skipped() {
            return recovery.startsWith("skipped");
        }
    }

    /**
     * One hold in the timeline: from the acquire to the release, loss or expiry, whichever came first.
     *
     * @param overlap another client's hold crossed this one as the holders believed them (a frozen holder past
     *     its lease): drawn hatched, not a violation by itself
     * @param violation the hold contains an event the history checker or the fenced register found wrong
     */
    record Hold(String client, double startMs, double endMs, long fence, boolean overlap, boolean violation) {}

    /**
     * An acquire that did not get the lock, for the timeline.
     *
     * @param outcome {@code timeout} (waited its whole wait time) or {@code error} (the backend failed it)
     */
    record Attempt(String client, double startMs, double endMs, String outcome) {}

    static BackendResult unavailable(String backend, String tier, String uri, String reason, String install) {
        return new BackendResult(
                backend,
                tier,
                uri,
                false,
                reason,
                install,
                false,
                0,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                0,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                0,
                Map.of(),
                Double.NaN,
                Double.NaN,
                0,
                0,
                0,
                0,
                0,
                0,
                false,
                List.of(),
                Map.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of());
    }
}
