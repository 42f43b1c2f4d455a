package io.lockstep.cli;

import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What {@code compare} measured, as printed, written by {@code --json} and drawn by {@code --report}.
 * Times in the timeline are milliseconds since the backend's run started.
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
        List<Double> histogramEdgesMs,
        List<BackendResult> backends) {

    /** One backend's row, timeline and histogram. */
    record BackendResult(
            String backend,
            String tier,
            String uri,
            boolean started,
            @Nullable String unavailableReason,
            @Nullable String install,
            boolean fencing,
            long acquisitions,
            double acquireP50Ms,
            double acquireP99Ms,
            double handoffP50Ms,
            double handoffP99Ms,
            double throughputPerS,
            long staleWritesAccepted,
            long staleWritesRejectedByFence,
            long overlappingHolds,
            long fencesNotIncreasing,
            boolean invariantBroken,
            List<FaultResult> faults,
            Map<String, Long> errors,
            List<Hold> holds,
            List<Long> acquireHistogram,
            List<String> violations) {}

    /**
     * A fault as it happened, and how long until a client held the lock again.
     *
     * @param kind the scheduled fault (the same on every backend, e.g. {@code server-kill})
     * @param label what it was on this backend (e.g. {@code failover} on Redis Sentinel, {@code leader-kill}
     *     on a cluster; else the kind)
     * @param recoveryMs from the end of the fault (from its start for a frozen holder, a failover or a leader
     *     fault, which the backend is meant to ride through) until a client held the lock again
     */
    record FaultResult(
            String kind, String label, double startMs, double endMs, @Nullable Double recoveryMs, String note) {}

    /** One hold in the timeline: from the acquire to the release, loss or expiry, whichever came first. */
    record Hold(String client, double startMs, double endMs, long fence, boolean overlap) {}

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
                Double.NaN,
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
                List.of());
    }
}
