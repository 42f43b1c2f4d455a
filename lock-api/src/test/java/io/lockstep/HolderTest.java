package io.lockstep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.spi.HolderText;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class HolderTest {

    @Test
    @DisplayName("a label is kept by the options, compared and shown; without one there is none")
    void labelIsAnOption() {
        LeaseOptions plain = LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(1));
        LeaseOptions labelled = plain.withLabel("nightly-report").withAutoRenew();
        assertThat(plain.label()).isEmpty();
        assertThat(labelled.label()).contains("nightly-report");
        assertThat(labelled.withLeaseTime(Duration.ofSeconds(60)).label()).contains("nightly-report");
        assertThat(labelled.withAutoRenew(Duration.ofMinutes(5)).label()).contains("nightly-report");
        assertThat(labelled)
                .isNotEqualTo(plain.withAutoRenew())
                .isEqualTo(plain.withAutoRenew().withLabel("nightly-report"));
        assertThat(labelled.toString()).contains("label=nightly-report");
        assertThat(LeaseOptions.of(Duration.ofSeconds(1))
                        .withLabel("cron@web-3:deploy/42+x_y.z")
                        .label())
                .contains("cron@web-3:deploy/42+x_y.z");
    }

    @Test
    @DisplayName("this process unlabelled is one instance; holders are equal by host, pid and label alone")
    void equality() {
        Holder unlabelled = Holder.thisProcess(null);
        assertThat(Holder.thisProcess(null)).isSameAs(unlabelled);
        Holder copy = new Holder(unlabelled.host(), unlabelled.pid(), Optional.empty());
        assertThat(copy).isNotSameAs(unlabelled).isEqualTo(unlabelled).hasSameHashCodeAs(unlabelled);
        assertThat(unlabelled).isEqualTo(copy);
        Holder labelled = Holder.thisProcess("job");
        assertThat(labelled.host()).isEqualTo(unlabelled.host());
        assertThat(labelled.pid()).isEqualTo(unlabelled.pid());
        assertThat(labelled).isNotEqualTo(unlabelled).isEqualTo(Holder.thisProcess("job"));
        assertThat(labelled.hashCode()).isEqualTo(Holder.thisProcess("job").hashCode());
        assertThat(new Holder("other-host", unlabelled.pid(), Optional.empty())).isNotEqualTo(unlabelled);
        assertThat(new Holder(unlabelled.host(), unlabelled.pid() + 1, Optional.empty()))
                .isNotEqualTo(unlabelled);
        assertThat(unlabelled).isNotEqualTo(null).isNotEqualTo(unlabelled.host());
    }

    @Test
    @DisplayName("a bad label is rejected naming the label, the character and the rule")
    void badLabels() {
        LeaseOptions ok = LeaseOptions.of(Duration.ofSeconds(30));
        assertThatThrownBy(() -> ok.withLabel("two words"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("label 'two words' has ' ' at index 3")
                .hasMessageContaining("1 to 64 characters: ASCII letters, digits and . _ - : @ / +");
        assertThatThrownBy(() -> ok.withLabel("a\nb"))
                .hasMessageContaining("label 'a\\u000ab' has '\\u000a' at index 1");
        assertThatThrownBy(() -> ok.withLabel("été")).hasMessageContaining("at index 0");
        assertThatThrownBy(() -> ok.withLabel("{x}")).hasMessageContaining("'{' at index 0");
        assertThatThrownBy(() -> ok.withLabel("")).hasMessageContaining("label '' has 0 characters");
        assertThatThrownBy(() -> ok.withLabel("x".repeat(65))).hasMessageContaining("has 65 characters");
        assertThatThrownBy(() -> ok.withLabel(null)).hasMessageContaining("label must not be null");
        assertThat(ok.withLabel("x".repeat(64)).label())
                .hasValueSatisfying(l -> assertThat(l).hasSize(64));
    }

    @Test
    @DisplayName("this process is its host and pid; the text form reads back, and text that is not one reads as none")
    void textForm() {
        Holder me = Holder.thisProcess("job-7");
        assertThat(me.pid()).isEqualTo(ProcessHandle.current().pid());
        assertThat(me.host()).isNotBlank().doesNotContain(" ");
        assertThat(me.label()).contains("job-7");
        assertThat(HolderText.decode(HolderText.encode(me))).contains(me);
        Holder unlabelled = new Holder("web-3.example", 42, Optional.empty());
        assertThat(HolderText.encode(unlabelled)).isEqualTo("web-3.example 42");
        assertThat(HolderText.decode("web-3.example 42")).contains(unlabelled);
        assertThat(HolderText.decode("web-3.example 42 cron"))
                .contains(new Holder("web-3.example", 42, Optional.of("cron")));
        for (String notOne : new String[] {"", "5000", "host", "host x", "host 0", "host 1 two words", "host 1 a{b}"}) {
            assertThat(HolderText.decode(notOne)).as(notOne).isEmpty();
        }
        assertThat(HolderText.decode(null)).isEmpty();
    }

    @Test
    @DisplayName("a free lock has no holder; the three-field state has none either")
    void stateHolder() {
        Holder h = new Holder("h", 1, Optional.empty());
        assertThat(new LockState(true, OptionalLong.of(3), Optional.empty()).holder())
                .isEmpty();
        assertThat(new LockState(true, OptionalLong.of(3), Optional.empty(), Optional.of(h)).holder())
                .contains(h);
        assertThatThrownBy(() -> new LockState(false, OptionalLong.empty(), Optional.empty(), Optional.of(h)))
                .hasMessageContaining("holder must be empty for a free lock");
        assertThatThrownBy(() -> new Holder("two words", 1, Optional.empty())).hasMessageContaining("host");
        assertThatThrownBy(() -> new Holder("h", 0, Optional.empty())).hasMessageContaining("pid must be positive");
    }
}
