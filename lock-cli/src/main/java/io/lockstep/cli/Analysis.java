package io.lockstep.cli;

import io.lockstep.cli.CompareReport.BackendResult;
import io.lockstep.cli.CompareReport.FaultResult;
import io.lockstep.cli.CompareReport.Hold;
import io.lockstep.tck.history.Event;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.Event.Type;
import io.lockstep.tck.history.HistoryChecker;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/** Turns one backend's history into its row of the table, its timeline and its histogram. */
final class Analysis {

    /** Upper edges of the acquire-latency histogram's buckets, in milliseconds; one more bucket above. */
    static final List<Double> EDGES_MS =
            List.of(0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0);

    private static final int MAX_HOLDS = 4000;
    private static final int MAX_VIOLATIONS = 2;

    private Analysis() {}

    static BackendResult of(
            String backend,
            String tier,
            String uri,
            boolean fencing,
            boolean tolerated,
            List<Event> unsorted,
            List<Long> acquireNanos,
            Map<String, AtomicLong> errorCounts,
            List<FaultResult> faultsDone,
            List<long[]> faultWindows,
            long start,
            long stopped,
            CompareSettings settings) {
        List<Event> events = new ArrayList<>(unsorted);
        events.sort(Comparator.comparingLong(Event::nanoTime).thenComparingLong(Event::index));
        Map<String, Long> errors = new TreeMap<>();
        errorCounts.forEach((k, v) -> errors.put(k, v.get()));

        long acquisitions = 0;
        List<Long> handoffs = new ArrayList<>();
        Map<String, Long> acquireInvoked = new HashMap<>();
        long lastReleaseInvoke = Long.MIN_VALUE;
        boolean releaseConsumed = true;
        String latestHolder = "";
        long staleAccepted = 0;
        long staleRejected = 0;
        long freshRejected = 0;
        for (Event e : events) {
            if (e.op() == Op.ACQUIRE && e.type() == Type.INVOKE) {
                acquireInvoked.put(e.client(), e.nanoTime());
            } else if (e.op() == Op.ACQUIRE && e.type() == Type.OK) {
                if (BackendRun.isWorker(e)) {
                    acquisitions++;
                    Long invoked = acquireInvoked.get(e.client());
                    if (!releaseConsumed && invoked != null && invoked < lastReleaseInvoke) {
                        handoffs.add(e.nanoTime() - lastReleaseInvoke);
                    }
                }
                releaseConsumed = true;
                latestHolder = e.client();
            } else if (e.op() == Op.RELEASE && e.type() == Type.INVOKE) {
                lastReleaseInvoke = e.nanoTime();
                releaseConsumed = false;
            } else if (e.op() == Op.WRITE) {
                boolean stale = !e.client().equals(latestHolder);
                if (stale && e.type() == Type.OK) {
                    staleAccepted++;
                } else if (stale) {
                    staleRejected++;
                } else if (e.type() == Type.FAIL) {
                    freshRejected++;
                }
            }
        }
        if (freshRejected > 0) {
            errors.put("current holder's write rejected (fences went backwards)", freshRejected);
        }

        HistoryChecker.Report report =
                BackendRun.checker(fencing, settings.leaseTime()).check(events);
        long overlaps = 0;
        long fenceBackwards = 0;
        List<String> violations = new ArrayList<>();
        for (HistoryChecker.Violation v : report.violations()) {
            switch (v.rule()) {
                case OVERLAPPING_HOLDS -> overlaps++;
                case FENCE_NOT_INCREASING -> fenceBackwards++;
                default -> {
                    continue; // leftovers after faults are expected; the table reports safety
                }
            }
            if (violations.size() < MAX_VIOLATIONS) {
                violations.add(v.rule() + ": " + v.message());
            }
        }

        List<FaultResult> faults = new ArrayList<>();
        synchronized (faultsDone) {
            for (int i = 0; i < faultsDone.size(); i++) {
                FaultResult f = faultsDone.get(i);
                Double recovery = null;
                long[] w = findWindow(faultWindows, f, start);
                if (w != null) {
                    long from = w[2] == 1 ? w[0] : w[1];
                    for (Event e : events) {
                        if (e.nanoTime() > from && e.op() == Op.ACQUIRE && BackendRun.isWorker(e)) {
                            recovery = (e.nanoTime() - from) / 1e6;
                            break;
                        }
                    }
                }
                faults.add(new FaultResult(f.kind(), f.label(), f.startMs(), f.endMs(), recovery, f.note()));
            }
        }

        List<Hold> holds = holds(events, start, stopped);
        long[] buckets = new long[EDGES_MS.size() + 1];
        for (long n : acquireNanos) {
            double ms = n / 1e6;
            int b = 0;
            while (b < EDGES_MS.size() && ms > EDGES_MS.get(b)) {
                b++;
            }
            buckets[b]++;
        }
        List<Long> histogram = new ArrayList<>();
        for (long c : buckets) {
            histogram.add(c);
        }
        double seconds = (stopped - start) / 1e9;
        boolean broken = (fencing && staleAccepted > 0) || (tolerated && (overlaps > 0 || fenceBackwards > 0));
        return new BackendResult(
                backend,
                tier,
                uri,
                true,
                null,
                null,
                fencing,
                acquisitions,
                percentile(acquireNanos, 50),
                percentile(acquireNanos, 99),
                percentile(handoffs, 50),
                percentile(handoffs, 99),
                acquisitions / seconds,
                staleAccepted,
                staleRejected,
                overlaps,
                fenceBackwards,
                broken,
                faults,
                errors,
                holds,
                histogram,
                violations);
    }

    private static long[] findWindow(List<long[]> windows, FaultResult f, long start) {
        synchronized (windows) {
            for (long[] w : windows) {
                if (Math.abs((w[0] - start) / 1e6 - f.startMs()) < 0.001) {
                    return w;
                }
            }
        }
        return null;
    }

    /**
     * Holds as each holder saw them: from its acquire to its release, its loss or its next acquire, so
     * that a holder frozen past its lease shows where it still believed it held the lock.
     */
    static List<Hold> holds(List<Event> events, long start, long stopped) {
        record Open(long from, long fence) {}
        Map<String, Open> open = new HashMap<>();
        List<Hold> out = new ArrayList<>();
        List<String> clients = new ArrayList<>();
        List<long[]> spans = new ArrayList<>();
        for (Event e : events) {
            boolean ends = (e.op() == Op.RELEASE && e.type() == Type.INVOKE)
                    || (e.op() == Op.LOST)
                    || (e.op() == Op.ACQUIRE && e.type() == Type.INVOKE);
            if (ends && open.containsKey(e.client())) {
                Open o = open.remove(e.client());
                clients.add(e.client());
                spans.add(new long[] {o.from(), e.nanoTime(), o.fence()});
            }
            if (e.op() == Op.ACQUIRE && e.type() == Type.OK) {
                open.put(e.client(), new Open(e.nanoTime(), e.fence().orElse(-1)));
            }
        }
        open.forEach((client, o) -> {
            clients.add(client);
            spans.add(new long[] {o.from(), stopped, o.fence()});
        });
        for (int i = 0; i < spans.size() && out.size() < MAX_HOLDS; i++) {
            long[] s = spans.get(i);
            boolean overlap = false;
            for (int j = 0; j < spans.size() && !overlap; j++) {
                long[] t = spans.get(j);
                overlap = j != i && !clients.get(j).equals(clients.get(i)) && s[0] < t[1] && t[0] < s[1];
            }
            out.add(new Hold(clients.get(i), (s[0] - start) / 1e6, (s[1] - start) / 1e6, s[2], overlap));
        }
        return out;
    }

    static double percentile(List<Long> nanos, int p) {
        List<Long> sorted;
        synchronized (nanos) {
            sorted = new ArrayList<>(nanos);
        }
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        sorted.sort(null);
        int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index))) / 1e6;
    }
}
