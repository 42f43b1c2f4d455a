package io.lockstep.cli;

import io.lockstep.cli.CompareReport.Attempt;
import io.lockstep.cli.CompareReport.BackendResult;
import io.lockstep.cli.CompareReport.FaultResult;
import io.lockstep.cli.CompareReport.Hold;
import io.lockstep.tck.history.Event;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.Event.Type;
import io.lockstep.tck.history.HistoryChecker;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Turns one backend's history into its row of the table, its timeline and its histogram. Each fault is judged
 * inside its own window, from its start to the next fault's set-up (or the end of the run): its recovery is
 * the first acquisition inside that window, and a violation counts against the fault whose window it falls in.
 */
final class Analysis {

    /** Upper edges of the acquire-latency histogram's buckets, in milliseconds; one more bucket above. */
    static final List<Double> EDGES_MS =
            List.of(0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0);

    static final String NOT_RECOVERED_NEXT = "not recovered before the next fault";
    static final String NOT_RECOVERED_END = "not recovered before the run ended";

    private static final int MAX_HOLDS = 4000;
    private static final int MAX_VIOLATIONS = 2;

    private Analysis() {}

    /**
     * What one backend's run recorded.
     *
     * @param failsOver whether a server fault on this row is a failover (Redis Sentinel)
     * @param start the run's start ({@link System#nanoTime()}); fault times are milliseconds after it
     */
    record Run(
            String backend,
            String tier,
            String uri,
            boolean fencing,
            boolean failsOver,
            List<Event> events,
            List<Long> uncontendedNanos,
            Map<String, AtomicLong> errors,
            List<FaultResult> faults,
            long start,
            long stopped) {}

    /** A violation of a rule (or a stale write accepted) at {@code atMs}, excused or not. */
    record Finding(String what, double atMs, String rule) {}

    static BackendResult of(Run run, CompareSettings settings) {
        long start = run.start();
        List<Event> events = new ArrayList<>(run.events());
        events.sort(Comparator.comparingLong(Event::nanoTime).thenComparingLong(Event::index));
        Map<String, Long> errors = new TreeMap<>();
        run.errors().forEach((k, v) -> errors.put(k, v.get()));

        long acquisitions = 0;
        long timeouts = 0;
        List<Long> handoffs = new ArrayList<>();
        List<Long> waits = new ArrayList<>();
        List<Double> workerAcquiresMs = new ArrayList<>();
        Map<String, Long> holdsPerClient = new TreeMap<>();
        Map<String, Long> acquireInvoked = new HashMap<>();
        long lastReleaseInvoke = Long.MIN_VALUE;
        boolean releaseConsumed = true;
        String latestHolder = "";
        long staleWrites = 0;
        long staleAccepted = 0;
        long ownRefused = 0;
        List<Finding> findings = new ArrayList<>();
        List<Attempt> failed = new ArrayList<>();
        List<Mark> marks = new ArrayList<>();
        for (Event e : events) {
            boolean worker = BackendRun.isWorker(e.client());
            if (e.op() == Op.ACQUIRE && e.type() == Type.INVOKE) {
                acquireInvoked.put(e.client(), e.nanoTime());
                if (worker) {
                    holdsPerClient.putIfAbsent(e.client(), 0L);
                }
            } else if (e.op() == Op.ACQUIRE && e.type() == Type.OK) {
                Long invoked = acquireInvoked.get(e.client());
                if (worker) {
                    acquisitions++;
                    holdsPerClient.merge(e.client(), 1L, Long::sum);
                    workerAcquiresMs.add(ms(e.nanoTime() - start));
                    if (invoked != null) {
                        waits.add(e.nanoTime() - invoked);
                    }
                    if (!releaseConsumed && invoked != null && invoked < lastReleaseInvoke) {
                        handoffs.add(e.nanoTime() - lastReleaseInvoke);
                    }
                }
                releaseConsumed = true;
                latestHolder = e.client();
            } else if (e.op() == Op.ACQUIRE && e.type() == Type.FAIL && worker) {
                // A timeout: the client waited its whole wait time and is counted with that wait.
                timeouts++;
                Long invoked = acquireInvoked.get(e.client());
                if (invoked != null) {
                    waits.add(e.nanoTime() - invoked);
                    attempt(failed, e, invoked, start, "timeout");
                }
            } else if (e.op() == Op.ACQUIRE && e.type() == Type.UNKNOWN && worker) {
                Long invoked = acquireInvoked.get(e.client());
                if (invoked != null) {
                    attempt(failed, e, invoked, start, "error");
                }
            } else if (e.op() == Op.RELEASE && e.type() == Type.INVOKE) {
                lastReleaseInvoke = e.nanoTime();
                releaseConsumed = false;
            } else if (e.op() == Op.WRITE) {
                boolean stale = !e.client().equals(latestHolder);
                if (stale) {
                    staleWrites++;
                    if (e.type() == Type.OK) {
                        staleAccepted++;
                        if (run.fencing()) {
                            findings.add(new Finding(
                                    e.client() + "'s stale write accepted", ms(e.nanoTime() - start), "STALE"));
                            marks.add(new Mark(e.client(), e.nanoTime()));
                        }
                    }
                } else if (e.type() == Type.FAIL) {
                    ownRefused++;
                }
            }
        }

        HistoryChecker.Report report =
                BackendRun.checker(run.fencing(), settings.leaseTime()).check(events);
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
            findings.add(new Finding(
                    v.message(), ms(v.second().nanoTime() - start), v.rule().name()));
            marks.add(new Mark(v.first().client(), v.first().nanoTime()));
            marks.add(new Mark(v.second().client(), v.second().nanoTime()));
            if (violations.size() < MAX_VIOLATIONS) {
                violations.add(v.rule() + ": " + v.message());
            }
        }

        double stoppedMs = ms(run.stopped() - start);
        List<FaultResult> faults = withTolerance(run);
        Judgement judged = judge(faults, findings);
        faults = measure(judged.faults(), workerAcquiresMs, stoppedMs);

        List<Hold> holds = holds(events, start, run.stopped(), marks);
        long[] buckets = new long[EDGES_MS.size() + 1];
        for (long n : waits) {
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
        if (acquisitions == 0) {
            return CompareReport.unavailable(
                    run.backend(),
                    run.tier(),
                    run.uri(),
                    (run.stopped() - start < settings.duration().toNanos()
                                    ? "stopped before any client acquired the lock"
                                    : "no client acquired the lock in " + Durations.text(settings.duration()))
                            + (errors.isEmpty() ? "" : " (" + errors + ")"),
                    "");
        }
        double seconds = (run.stopped() - start) / 1e9;
        return new BackendResult(
                run.backend(),
                run.tier(),
                run.uri(),
                true,
                null,
                null,
                run.fencing(),
                acquisitions,
                percentile(run.uncontendedNanos(), 50),
                percentile(waits, 50),
                percentile(waits, 99),
                timeouts,
                waits.isEmpty() ? Double.NaN : Collections.max(waits) / 1e6,
                percentile(handoffs, 50),
                percentile(handoffs, 99),
                acquisitions / seconds,
                holdsPerClient,
                minMaxShare(holdsPerClient.values()),
                jainIndex(holdsPerClient.values()),
                staleWrites,
                staleAccepted,
                staleWrites - staleAccepted,
                ownRefused,
                overlaps,
                fenceBackwards,
                judged.broken(),
                faults,
                errors,
                holds,
                failed,
                histogram,
                violations);
    }

    /** An event the history checker (or the fenced register) found in violation: its client and time. */
    record Mark(String client, long nanoTime) {}

    private static void attempt(List<Attempt> out, Event e, long invoked, long start, String outcome) {
        if (out.size() < MAX_HOLDS) {
            out.add(new Attempt(e.client(), ms(invoked - start), ms(e.nanoTime() - start), outcome));
        }
    }

    private static List<FaultResult> withTolerance(Run run) {
        List<FaultResult> out = new ArrayList<>();
        synchronized (run.faults()) {
            for (FaultResult f : run.faults()) {
                boolean tolerated = BackendRun.tolerates(run.tier(), FaultKind.parse(f.kind()), run.failsOver());
                out.add(new FaultResult(
                        f.kind(),
                        f.label(),
                        f.scheduledStartMs(),
                        f.startMs(),
                        f.endMs(),
                        f.windowEndMs(),
                        f.recoveryMs(),
                        f.recovery(),
                        f.recoveryFromStart(),
                        f.unavailableMs(),
                        f.restartMs(),
                        tolerated,
                        0,
                        f.note()));
            }
        }
        return out;
    }

    /** The faults with their violation counts, and whether any finding breaks the tier's claims. */
    record Judgement(List<FaultResult> faults, boolean broken) {}

    /**
     * Counts each finding against a fault. A finding inside the window of a fault the tier does not claim to
     * survive is that fault's, and excused. A fence that went back or a stale write accepted after such a
     * fault started is its lasting consequence (a restarted Redis counts from 1 again): it is counted against
     * that fault, wherever it falls, and excused. Any other finding is counted against the window it falls
     * in and breaks the run; so does a finding outside every window.
     */
    static Judgement judge(List<FaultResult> faults, List<Finding> findings) {
        long[] counts = new long[faults.size()];
        boolean broken = false;
        for (Finding finding : findings) {
            int in = -1;
            int cause = -1;
            boolean lasting = !finding.rule().equals("OVERLAPPING_HOLDS");
            for (int i = 0; i < faults.size(); i++) {
                FaultResult f = faults.get(i);
                if (f.skipped() || finding.atMs() < f.startMs()) {
                    continue;
                }
                if (finding.atMs() <= Math.max(f.windowEndMs(), f.endMs())) {
                    in = i;
                }
                // A fast clock leaves nothing behind (fences are not reset): later findings are not its.
                if (lasting && !f.tolerated() && !f.kind().equals(FaultKind.CLOCK.label)) {
                    cause = i;
                }
            }
            // A lasting consequence of an earlier kill that falls in the clock fault's window stays the kill's.
            boolean inClock = in >= 0 && faults.get(in).kind().equals(FaultKind.CLOCK.label);
            if (in >= 0 && !faults.get(in).tolerated() && !(inClock && cause >= 0)) {
                counts[in]++;
            } else if (cause >= 0) {
                counts[cause]++;
            } else {
                if (in >= 0) {
                    counts[in]++;
                }
                broken = true;
            }
        }
        List<FaultResult> out = new ArrayList<>();
        for (int i = 0; i < faults.size(); i++) {
            FaultResult f = faults.get(i);
            out.add(f.measured(f.recoveryMs(), f.recovery(), f.unavailableMs(), counts[i]));
        }
        return new Judgement(out, broken);
    }

    /**
     * Recovery and unavailability of each fault, inside its own window: from its start to the next fault's
     * actual start or its scheduled window end, whichever is first (never before the fault's own end), and
     * never past {@code stoppedMs}.
     */
    static List<FaultResult> measure(List<FaultResult> faults, List<Double> workerAcquiresMs, double stoppedMs) {
        List<Double> acquires = new ArrayList<>(workerAcquiresMs);
        acquires.sort(null);
        List<FaultResult> out = new ArrayList<>();
        for (int i = 0; i < faults.size(); i++) {
            FaultResult f = faults.get(i);
            if (f.skipped()) {
                out.add(f);
                continue;
            }
            double windowEnd = f.windowEndMs();
            boolean last = true;
            for (int j = i + 1; j < faults.size(); j++) {
                if (!faults.get(j).skipped()) {
                    windowEnd = Math.min(windowEnd, faults.get(j).startMs());
                    last = false;
                    break;
                }
            }
            windowEnd = Math.min(Math.max(windowEnd, f.endMs()), stoppedMs);
            double from = f.recoveryFromStart() ? f.startMs() : f.endMs();
            Double recovery = null;
            for (double t : acquires) {
                if (t > from && t <= windowEnd) {
                    recovery = t - from;
                    break;
                }
            }
            String why =
                    recovery != null ? "" : last && windowEnd >= stoppedMs ? NOT_RECOVERED_END : NOT_RECOVERED_NEXT;
            double previous = f.startMs();
            double longest = 0;
            for (double t : acquires) {
                if (t <= f.startMs()) {
                    continue;
                }
                if (t > windowEnd) {
                    break;
                }
                longest = Math.max(longest, t - previous);
                previous = t;
            }
            if (recovery == null) {
                longest = Math.max(longest, windowEnd - previous);
            }
            out.add(f.measured(recovery, why, longest, f.violations()));
        }
        return out;
    }

    /** The fewest holds of a client divided by the most; NaN without clients. */
    static double minMaxShare(Collection<Long> holds) {
        if (holds.isEmpty()) {
            return Double.NaN;
        }
        long max = Collections.max(holds);
        return max == 0 ? Double.NaN : (double) Collections.min(holds) / max;
    }

    /** Jain's fairness index, (sum x)^2 / (n * sum x^2): 1 when even, 1/n when one client got everything. */
    static double jainIndex(Collection<Long> holds) {
        double sum = 0;
        double squares = 0;
        for (long x : holds) {
            sum += x;
            squares += (double) x * x;
        }
        return squares == 0 ? Double.NaN : sum * sum / (holds.size() * squares);
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    /**
     * Holds as each holder saw them: from its acquire to its release, its loss or its next acquire, so
     * that a holder frozen past its lease shows where it still believed it held the lock. A hold is
     * {@code overlap} when another client's hold crossed it (as believed: not a violation by itself) and
     * {@code violation} when it holds one of {@code marks}, events the checker or the register found wrong.
     */
    static List<Hold> holds(List<Event> events, long start, long stopped, List<Mark> marks) {
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
            String client = clients.get(i);
            boolean violation = marks.stream()
                    .anyMatch(m -> m.client().equals(client) && m.nanoTime() >= s[0] && m.nanoTime() <= s[1]);
            out.add(new Hold(client, (s[0] - start) / 1e6, (s[1] - start) / 1e6, s[2], overlap, violation));
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
