package io.lockstep.spring.integration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What the participants of one election reported, in the order the test received it; names every grant
 * that came while another participant that was not cut off still led.
 */
final class Election {

    private final Set<String> leaders = new HashSet<>();
    private final Set<String> cutOff = new HashSet<>();
    private final List<Long> fences = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private final List<String> lines = new ArrayList<>();

    /** Takes one line of a participant: {@code GRANTED <id> <fence>} or {@code REVOKED <id>}. */
    synchronized void accept(String line) {
        lines.add(line);
        String[] parts = line.split(" ");
        if (parts[0].equals("GRANTED")) {
            Set<String> others = new HashSet<>(leaders);
            others.removeAll(cutOff);
            if (!others.isEmpty()) {
                violations.add(parts[1] + " was granted while " + others + " led");
            }
            leaders.add(parts[1]);
            fences.add(Long.parseLong(parts[2]));
        } else if (parts[0].equals("REVOKED")) {
            leaders.remove(parts[1]);
        }
        notifyAll();
    }

    /** From now on, {@code id}'s own view of its leadership no longer counts (it was cut off or killed). */
    synchronized void cutOff(String id) {
        cutOff.add(id);
    }

    /** Waits for a leader not in {@code excluded}; fails after {@code bound}. */
    synchronized String awaitLeader(Set<String> excluded, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + Waits.TIMING.scaled(bound).toNanos();
        while (true) {
            Optional<String> leader =
                    leaders.stream().filter(id -> !excluded.contains(id)).findFirst();
            if (leader.isPresent()) {
                return leader.get();
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("no leader other than " + excluded + " within " + bound + "; lines: " + lines);
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }

    /** Waits until {@code id} is revoked; fails after {@code bound}. */
    synchronized void awaitRevoked(String id, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + Waits.TIMING.scaled(bound).toNanos();
        while (leaders.contains(id)) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError(id + " was not revoked within " + bound + "; lines: " + lines);
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }

    synchronized Set<String> leaders() {
        return Set.copyOf(leaders);
    }

    synchronized List<Long> fences() {
        return List.copyOf(fences);
    }

    synchronized List<String> violations() {
        return List.copyOf(violations);
    }

    @Override
    public synchronized String toString() {
        return String.join("\n", lines);
    }
}
