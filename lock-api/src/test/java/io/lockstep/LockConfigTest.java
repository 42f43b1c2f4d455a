package io.lockstep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class LockConfigTest {

    @Test
    @DisplayName("query parameters become decoded properties")
    void queryBecomesProperties() {
        LockConfig config = LockConfig.of("Redis://h:1/2?keyPrefix=a%3Ab&timeout=500ms&flag");
        assertThat(config.scheme()).isEqualTo("redis");
        assertThat(config.property("keyPrefix")).contains("a:b");
        assertThat(config.property("flag")).contains("");
        assertThat(config.durationProperty("timeout", Duration.ZERO)).isEqualTo(Duration.ofMillis(500));
        assertThat(config.durationProperty("absent", Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(3));
        assertThat(config.withProperty("timeout", "PT2S").durationProperty("timeout", Duration.ZERO))
                .isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    @DisplayName("typed properties name the key and the bad value")
    void badTypedValues() {
        LockConfig config = LockConfig.of("x://h?n=abc&big=99&b=maybe&d=5%20parsecs");
        assertThatThrownBy(() -> config.intProperty("n", 1, 0, 10))
                .hasMessageContaining("n must be an integer, was 'abc'");
        assertThatThrownBy(() -> config.intProperty("big", 1, 0, 10))
                .hasMessageContaining("big must be between 0 and 10, was 99");
        assertThatThrownBy(() -> config.booleanProperty("b", true))
                .hasMessageContaining("b must be true or false, was 'maybe'");
        assertThatThrownBy(() -> config.durationProperty("d", Duration.ZERO))
                .hasMessageContaining("d must be a duration");
    }

    @Test
    @DisplayName("URIs without a scheme or unparsable ones are rejected")
    void badUris() {
        assertThatThrownBy(() -> LockConfig.of("localhost:6379 x")).isInstanceOf(LockConfigurationException.class);
        assertThatThrownBy(() -> LockConfig.of("/just/a/path")).hasMessageContaining("no scheme");
        assertThatThrownBy(() -> LockConfig.of("  ")).hasMessageContaining("empty");
    }

    @Test
    @DisplayName("passwords never appear in messages")
    void passwordsAreRedacted() {
        assertThat(LockConfig.redacted(URI.create("redis://user:hunter2@host:1")))
                .isEqualTo("redis://user:***@host:1");
        assertThat(LockConfig.of("redis://user:hunter2@host:1").toString()).doesNotContain("hunter2");
        assertThat(LockConfig.redacted(URI.create("redis://host:1"))).isEqualTo("redis://host:1");
    }
}
