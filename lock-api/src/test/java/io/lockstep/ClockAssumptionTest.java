package io.lockstep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class ClockAssumptionTest {

    @Test
    @DisplayName("a provider built without a clock assumption declares none: rates agree, no wall clocks compared")
    void infoWithoutAClockDeclaresNone() {
        ProviderInfo info = new ProviderInfo("x", StrengthTier.BEST_EFFORT, Set.of());
        assertThat(info.clock()).isEqualTo(ClockAssumption.NONE);
        assertThat(info.clock().maxRateDrift()).isZero();
        assertThat(info.clock().comparesWallClocks()).isFalse();
        assertThat(info.withClock(ClockAssumption.rateDrift(0.01)).clock().maxRateDrift())
                .isEqualTo(0.01);
    }

    @Test
    @DisplayName("the drift is in [0, 1) and the offset not negative; messages name the field and the value")
    void invalidAssumptionsAreRejected() {
        assertThatThrownBy(() -> ClockAssumption.rateDrift(1)).hasMessage("maxRateDrift must be in [0, 1), was 1.0");
        assertThatThrownBy(() -> ClockAssumption.rateDrift(Double.NaN)).hasMessageContaining("maxRateDrift");
        assertThatThrownBy(() -> ClockAssumption.NONE.withWallClockOffset(Duration.ofSeconds(-1)))
                .hasMessage("maxWallClockOffset must not be negative, was PT-1S");
        ClockAssumption cas = ClockAssumption.rateDrift(0.01).withWallClockOffset(Duration.ofSeconds(2));
        assertThat(cas.comparesWallClocks()).isTrue();
        assertThat(cas.maxWallClockOffset()).isEqualTo(Duration.ofSeconds(2));
    }
}
