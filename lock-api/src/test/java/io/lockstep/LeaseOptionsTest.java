package io.lockstep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class LeaseOptionsTest {

    @Test
    @DisplayName("defaults: no wait, no renewal, no cap")
    void defaults() {
        LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30));
        assertThat(options.leaseTime()).isEqualTo(Duration.ofSeconds(30));
        assertThat(options.waitTime()).isZero();
        assertThat(options.autoRenew()).isFalse();
        assertThat(options.maxHold()).isEmpty();
    }

    @Test
    @DisplayName("with* methods copy and keep the other settings")
    void withMethodsCopy() {
        LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30))
                .withWaitTime(Duration.ofSeconds(5))
                .withAutoRenew(Duration.ofMinutes(10));
        assertThat(options.withLeaseTime(Duration.ofSeconds(60)).waitTime()).isEqualTo(Duration.ofSeconds(5));
        assertThat(options.maxHold()).contains(Duration.ofMinutes(10));
        assertThat(options)
                .isEqualTo(LeaseOptions.of(Duration.ofSeconds(30))
                        .withWaitTime(Duration.ofSeconds(5))
                        .withAutoRenew(Duration.ofMinutes(10)));
        assertThat(options.toString()).contains("PT30S").contains("PT5S").contains("PT10M");
    }

    @Test
    @DisplayName("every bad value is rejected naming the field and the value")
    void badValues() {
        assertThatThrownBy(() -> LeaseOptions.of(null)).hasMessageContaining("leaseTime must not be null");
        assertThatThrownBy(() -> LeaseOptions.of(Duration.ZERO))
                .hasMessageContaining("leaseTime")
                .hasMessageContaining("PT0S");
        assertThatThrownBy(() -> LeaseOptions.of(Duration.ofNanos(999_999))).hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> LeaseOptions.of(Duration.ofSeconds(-1))).hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> LeaseOptions.of(Duration.ofSeconds(Long.MAX_VALUE)))
                .hasMessageContaining("leaseTime must be at most");
        assertThatThrownBy(() -> LeaseOptions.of(Duration.ofDays(366))).hasMessageContaining("leaseTime");
        LeaseOptions ok = LeaseOptions.of(Duration.ofSeconds(10));
        assertThatThrownBy(() -> ok.withWaitTime(Duration.ofMillis(-1))).hasMessageContaining("waitTime");
        assertThatThrownBy(() -> ok.withWaitTime(Duration.ofDays(400))).hasMessageContaining("waitTime");
        assertThatThrownBy(() -> ok.withAutoRenew(Duration.ofSeconds(1)))
                .hasMessageContaining("maxHold must be at least leaseTime");
        assertThatThrownBy(() -> LeaseOptions.requireValidLeaseTime(Duration.ofMillis(-3)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
    }
}
