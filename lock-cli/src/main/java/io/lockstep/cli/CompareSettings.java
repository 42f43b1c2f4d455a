package io.lockstep.cli;

import java.time.Duration;
import java.util.List;

/**
 * What one {@code compare} run does on each backend.
 *
 * @param duration how long the contended workload runs on each backend
 * @param clients how many clients contend (each with its own provider and connections)
 * @param leaseTime each lease's TTL
 * @param holdTime how long a client keeps the lock once it has it
 * @param faultLength how long each fault lasts (a paused holder stays frozen this long)
 * @param faults the faults to inject, in the schedule the seed draws
 * @param seed the schedule's seed
 */
record CompareSettings(
        Duration duration,
        int clients,
        Duration leaseTime,
        Duration holdTime,
        Duration faultLength,
        List<FaultKind> faults,
        long seed) {

    CompareSettings {
        faults = List.copyOf(faults);
        requireRange("--duration", duration, Duration.ofSeconds(1), Duration.ofHours(1));
        requireRange("--lease", leaseTime, Duration.ofMillis(100), Duration.ofMinutes(10));
        requireRange("--hold", holdTime, Duration.ofMillis(1), leaseTime);
        requireRange("--fault-length", faultLength, Duration.ofMillis(100), Duration.ofMinutes(10));
        if (clients < 1 || clients > 64) {
            throw new IllegalArgumentException("--clients must be between 1 and 64, was " + clients);
        }
        if (faults.contains(FaultKind.HOLDER_PAUSE) && faultLength.compareTo(leaseTime) <= 0) {
            throw new IllegalArgumentException("--fault-length (" + Durations.text(faultLength)
                    + ") must exceed --lease (" + Durations.text(leaseTime)
                    + ") so that a paused holder outlives its lease");
        }
    }

    /** How long a client waits for the lock before it records a timeout. */
    Duration waitTime() {
        return leaseTime.multipliedBy(3);
    }

    private static void requireRange(String option, Duration value, Duration min, Duration max) {
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(option + " must be between " + Durations.text(min) + " and "
                    + Durations.text(max) + ", was " + Durations.text(value));
        }
    }
}
