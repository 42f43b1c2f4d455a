package io.lockstep.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * When each fault starts, relative to the start of a run: the same seed, duration and faults give the
 * same schedule, so every backend meets the same faults at the same moments.
 */
record FaultSchedule(List<Entry> entries) {

    /** One fault at {@code at} after the start, lasting {@code length}. */
    record Entry(FaultKind kind, Duration at, Duration length) {}

    FaultSchedule {
        entries = List.copyOf(entries);
    }

    /**
     * Spreads {@code kinds} over {@code duration} in an order and with offsets drawn from {@code seed}: the
     * run is cut into one slot per fault plus a quiet one at the start, each fault begins in its slot.
     */
    static FaultSchedule of(List<FaultKind> kinds, Duration duration, Duration length, long seed) {
        Random random = new Random(seed);
        List<FaultKind> order = new ArrayList<>(kinds);
        Collections.shuffle(order, random);
        long slot = duration.toMillis() / (order.size() + 1);
        List<Entry> out = new ArrayList<>();
        for (int i = 0; i < order.size(); i++) {
            long jitter = slot <= 4 ? 0 : random.nextInt((int) Math.min(Integer.MAX_VALUE, slot / 4));
            out.add(new Entry(order.get(i), Duration.ofMillis(slot * (i + 1) + jitter), length));
        }
        return new FaultSchedule(out);
    }

    /** Keeps only the faults a backend lockctl did not start can take. */
    FaultSchedule clientSideOnly() {
        return new FaultSchedule(
                entries.stream().filter(e -> e.kind().clientSide).toList());
    }
}
