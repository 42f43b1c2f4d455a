package io.lockstep.tck;

import io.lockstep.tck.history.Event;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.Event.Type;
import io.lockstep.tck.history.History;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.opentest4j.TestAbortedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one fault test did, told as it happens and again when it fails: one INFO line per fault injected
 * and per fault healed (with the time since it was injected), and on failure the lease time, every fault
 * with its parameters and times, and each client's attempts from the test's {@link History} with their
 * durations and outcomes. Bounded: runs of like attempts fold into one line and each client shows at
 * most {@value #LINES_PER_CLIENT} lines. Thread-safe.
 */
final class FaultReport {

    private static final Logger log = LoggerFactory.getLogger(LockProviderCompatibilityKit.class);
    private static final int LINES_PER_CLIENT = 40;

    private final String test;
    private final long origin = System.nanoTime();
    private final List<String> faults = new ArrayList<>();
    private final Map<String, Long> injectedAt = new HashMap<>();
    private @Nullable Duration lease;
    private @Nullable History history;

    FaultReport(String test) {
        this.test = test;
    }

    /** The lease time of the scenario, for the failure message. */
    synchronized FaultReport lease(Duration leaseTime) {
        this.lease = leaseTime;
        return this;
    }

    /** The history whose attempts the failure message shows. */
    synchronized FaultReport history(History recorded) {
        this.history = recorded;
        return this;
    }

    /** Logs and remembers that {@code fault} (its name and parameters) is in effect from now. */
    synchronized void injected(String fault) {
        long now = System.nanoTime();
        injectedAt.put(fault, now);
        faults.add(String.format("+%d ms injected %s", millis(now - origin), fault));
        log.info("Fault injected in '{}': {}", test, fault);
    }

    /** Logs and remembers what a fault did (for example whether two validity windows overlapped). */
    synchronized void observed(String what) {
        long now = System.nanoTime();
        faults.add(String.format("+%d ms observed: %s", millis(now - origin), what));
        log.info("Fault observed in '{}': {}", test, what);
    }

    /** Logs and remembers that {@code fault} was undone. */
    synchronized void healed(String fault) {
        long now = System.nanoTime();
        Long at = injectedAt.remove(fault);
        String after = at == null ? "" : String.format(" (%d ms after it was injected)", millis(now - at));
        faults.add(String.format("+%d ms healed %s%s", millis(now - origin), fault, after));
        log.info("Fault healed in '{}': {}{}", test, fault, after);
    }

    /** Whether anything was injected or recorded, so a failure has something to explain. */
    synchronized boolean isEmpty() {
        return faults.isEmpty() && history == null;
    }

    /**
     * {@code failure} with this report appended to its message; an assumption (a skipped test) passes
     * through unchanged.
     */
    Throwable explain(Throwable failure) {
        if (failure instanceof TestAbortedException || isEmpty()) {
            return failure;
        }
        AssertionError explained = new AssertionError(failure.getMessage() + "\n" + this, failure);
        explained.setStackTrace(failure.getStackTrace());
        return explained;
    }

    @Override
    public synchronized String toString() {
        StringBuilder out = new StringBuilder("---- fault test '").append(test).append("'");
        if (lease != null) {
            out.append(", lease ").append(millis(lease.toNanos())).append(" ms");
        }
        out.append("; times from the start of the test\n");
        if (faults.isEmpty()) {
            out.append("faults: none injected\n");
        } else {
            out.append("faults:\n");
            faults.forEach(f -> out.append("  ").append(f).append('\n'));
            long now = System.nanoTime();
            injectedAt.forEach((fault, at) -> out.append(String.format(
                    "  +%d ms %s still in effect, %d ms after it was injected (undone after the test)%n",
                    millis(now - origin), fault, millis(now - at))));
        }
        if (history != null) {
            out.append("attempts per client (invoked at, outcome, duration):\n");
            attempts(history.events()).forEach((client, lines) -> {
                out.append("  ").append(client).append(":\n");
                lines.forEach(l -> out.append("    ").append(l).append('\n'));
            });
        }
        return out.toString();
    }

    /** Each client's attempts, like ones folded into runs, at most {@link #LINES_PER_CLIENT} lines each. */
    private Map<String, List<String>> attempts(List<Event> events) {
        Map<String, List<Attempt>> byClient = new LinkedHashMap<>();
        Map<String, Event> open = new HashMap<>();
        for (Event e : events) {
            List<Attempt> list = byClient.computeIfAbsent(e.client(), c -> new ArrayList<>());
            String key = e.client() + "\u0000" + e.op() + "\u0000" + e.lock();
            if (e.type() == Type.INVOKE) {
                open.put(key, e);
                continue;
            }
            Event invoked = open.remove(key);
            list.add(new Attempt(invoked == null ? e : invoked, e));
        }
        open.values().forEach(e -> byClient.get(e.client()).add(new Attempt(e, null)));
        Map<String, List<String>> lines = new LinkedHashMap<>();
        byClient.forEach((client, list) -> {
            list.sort((a, b) -> Long.compare(a.invoked.nanoTime(), b.invoked.nanoTime()));
            lines.put(client, fold(list));
        });
        return lines;
    }

    private List<String> fold(List<Attempt> attempts) {
        List<String> lines = new ArrayList<>();
        int i = 0;
        while (i < attempts.size()) {
            Attempt first = attempts.get(i);
            int j = i + 1;
            long longest = first.nanos();
            while (j < attempts.size() && attempts.get(j).kind().equals(first.kind()) && first.foldable()) {
                longest = Math.max(longest, attempts.get(j).nanos());
                j++;
            }
            if (j - i == 1) {
                lines.add(first.describe());
            } else {
                Attempt last = attempts.get(j - 1);
                lines.add(String.format(
                        "+%d..+%d ms %s x%d, longest %d ms",
                        millis(first.invoked.nanoTime() - origin),
                        millis(last.invoked.nanoTime() - origin),
                        first.kind(),
                        j - i,
                        millis(longest)));
            }
            i = j;
        }
        if (lines.size() <= LINES_PER_CLIENT) {
            return lines;
        }
        int head = 10;
        int tail = LINES_PER_CLIENT - head;
        List<String> kept = new ArrayList<>(lines.subList(0, head));
        kept.add("... " + (lines.size() - head - tail) + " lines left out ...");
        kept.addAll(lines.subList(lines.size() - tail, lines.size()));
        return kept;
    }

    private final class Attempt {
        final Event invoked;
        final @Nullable Event outcome;

        Attempt(Event invoked, @Nullable Event outcome) {
            this.invoked = invoked;
            this.outcome = outcome;
        }

        long nanos() {
            return outcome == null ? 0 : outcome.nanoTime() - invoked.nanoTime();
        }

        String kind() {
            return invoked.op() + " '" + shortName(invoked.lock()) + "' "
                    + (outcome == null ? "no outcome yet" : outcome.type().toString());
        }

        /** Grants (fence, deadline) are told one by one; refusals and unknowns fold into runs. */
        boolean foldable() {
            return outcome != null && outcome.type() != Type.OK && invoked.op() != Op.LOST;
        }

        String describe() {
            StringBuilder out = new StringBuilder()
                    .append('+')
                    .append(millis(invoked.nanoTime() - origin))
                    .append(" ms ")
                    .append(kind());
            if (outcome != null && outcome != invoked) {
                out.append(" in ").append(millis(nanos())).append(" ms");
            }
            if (outcome != null) {
                outcome.fence().ifPresent(f -> out.append(", fence ").append(f));
                if (outcome.op() == Op.ACQUIRE || outcome.op() == Op.EXTEND) {
                    outcome.value().ifPresent(v -> out.append(", valid until +")
                            .append(millis(v - origin))
                            .append(" ms"));
                }
            }
            return out.toString();
        }
    }

    /** The last part of a kit lock name ({@code tck/<test>/<random>/<suffix>}): the suffix. */
    private static String shortName(String lock) {
        String[] parts = lock.split("/", 4);
        return parts.length == 4 && parts[0].equals("tck") ? parts[3] : lock;
    }

    private static long millis(long nanos) {
        return Math.round(nanos / 1_000_000.0);
    }
}
