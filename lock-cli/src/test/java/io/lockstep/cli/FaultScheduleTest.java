package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("the fault schedule")
class FaultScheduleTest {

    static final List<FaultKind> ALL = List.of(FaultKind.values());
    static final Duration LENGTH = Duration.ofSeconds(2);
    static final Duration LEASE = Duration.ofSeconds(1);

    @Test
    @DisplayName("is on absolute times drawn from the seed: the same seed gives the same times")
    void sameSeedSameTimes() {
        Duration run = Duration.ofSeconds(40);
        assertThat(FaultSchedule.of(ALL, run, LENGTH, LEASE, 42))
                .isEqualTo(FaultSchedule.of(ALL, run, LENGTH, LEASE, 42));
        assertThat(FaultSchedule.of(ALL, run, LENGTH, LEASE, 42))
                .isNotEqualTo(FaultSchedule.of(ALL, run, LENGTH, LEASE, 7));
    }

    @Test
    @DisplayName("leaves each fault its length, its restart or set-up, and a recovery allowance before the next")
    void noRecoveryWindowContainsAnotherFault() {
        for (long seed = 0; seed < 50; seed++) {
            for (Duration run : List.of(FaultSchedule.minimumDuration(ALL, LENGTH, LEASE), Duration.ofSeconds(60))) {
                FaultSchedule s = FaultSchedule.of(ALL, run, LENGTH, LEASE, seed);
                assertThat(s.entries()).hasSize(ALL.size());
                for (int i = 0; i < s.entries().size(); i++) {
                    FaultSchedule.Entry e = s.entries().get(i);
                    Duration end = e.at().plus(e.length());
                    if (e.kind() == FaultKind.SERVER_KILL || e.kind() == FaultKind.CLOCK) {
                        end = end.plus(FaultSchedule.RESTART);
                    }
                    Duration recovered = end.plus(FaultSchedule.allowance(LEASE));
                    assertThat(e.windowEnd()).as("seed %d, %s", seed, e).isGreaterThanOrEqualTo(recovered);
                    assertThat(e.windowEnd()).isLessThanOrEqualTo(run);
                    if (i + 1 < s.entries().size()) {
                        assertThat(e.windowEnd())
                                .isEqualTo(s.entries().get(i + 1).prepareAt());
                    }
                }
            }
        }
    }

    @Test
    @DisplayName("gives the clock fault its start-up and one lease on a clock 50% slower, whatever --fault-length says")
    void theClockFaultLastsTheLeaseItsHolderBelieves() {
        FaultSchedule s = FaultSchedule.of(List.of(FaultKind.CLOCK), Duration.ofSeconds(30), LENGTH, LEASE, 42);
        assertThat(s.entries().get(0).length()).isEqualTo(FaultSchedule.CHILD_START.plusMillis(1500));
        assertThat(FaultSchedule.minimumDuration(List.of(FaultKind.CLOCK), Duration.ofMinutes(5), LEASE))
                .isEqualTo(FaultSchedule.minimumDuration(List.of(FaultKind.CLOCK), LENGTH, LEASE));
    }

    @Test
    @DisplayName("a duration too short for the faults is a usage error naming the minimum")
    void tooShort() {
        assertThatThrownBy(() -> FaultSchedule.of(ALL, Duration.ofSeconds(12), LENGTH, LEASE, 42))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--duration 12s is too short")
                .hasMessageContaining("at least " + Durations.text(FaultSchedule.minimumDuration(ALL, LENGTH, LEASE)));
    }
}
