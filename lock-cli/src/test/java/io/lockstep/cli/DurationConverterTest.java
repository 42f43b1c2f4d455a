package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class DurationConverterTest {

    @Test
    void readsTheShortFormsAndIso() {
        assertThat(DurationConverter.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(DurationConverter.parse("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(DurationConverter.parse("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(DurationConverter.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(DurationConverter.parse("PT1.5S")).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void rejectsTheRestWithExamples() {
        for (String bad : new String[] {"", "30", "3x", "-1s", "1.5s", "PTx"}) {
            assertThatThrownBy(() -> DurationConverter.parse(bad))
                    .as(bad)
                    .isInstanceOf(CommandLine.TypeConversionException.class)
                    .hasMessageContaining("'" + bad + "'");
        }
    }
}
