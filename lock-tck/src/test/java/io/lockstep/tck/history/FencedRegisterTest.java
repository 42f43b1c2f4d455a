package io.lockstep.tck.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.tck.history.Event.Type;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class FencedRegisterTest {

    @Test
    void acceptsEqualAndGreaterFencesAndRejectsStaleOnes() {
        FencedRegister register = new FencedRegister("orders");
        assertThat(register.highestFence()).isEmpty();

        assertThat(register.write("a", 3)).isTrue();
        assertThat(register.write("a", 3)).isTrue(); // the same holder writes again
        assertThat(register.write("b", 5)).isTrue();
        assertThat(register.write("a", 3)).isFalse(); // a woke up after b took over

        assertThat(register.accepted()).isEqualTo(3);
        assertThat(register.rejected()).isEqualTo(1);
        assertThat(register.highestFence()).hasValue(5);
        assertThat(register).hasToString("FencedRegister[orders, accepted=3, rejected=1, highestFence=5]");
    }

    @Test
    void recordsEachDecisionInTheHistory() {
        History history = new History();
        FencedRegister register = new FencedRegister("orders", history);
        register.write("b", 5);
        register.write("a", 3);

        assertThat(history.events())
                .extracting(Event::client, Event::type, Event::fence)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("b", Type.OK, OptionalLong.of(5)),
                        org.assertj.core.groups.Tuple.tuple("a", Type.FAIL, OptionalLong.of(3)));
        assertThat(HistoryChecker.strict().check(history).isValid()).isTrue();
    }
}
