package io.lockstep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.List;
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

    @Test
    @DisplayName("redaction works on the raw text of every form: password only, several hosts, '_', not a URI")
    void redactionCoversEveryForm() {
        assertThat(LockConfig.of("redis://hunter2@localhost:6379").toString())
                .isEqualTo("LockConfig[redis://***@localhost:6379, []]");
        assertThat(LockConfig.redacted("redis://:hunter2@h:1")).isEqualTo("redis://***@h:1");
        assertThat(LockConfig.redacted("redlock://app:hunter2@h1:1,h2:2/3?quorum=2"))
                .isEqualTo("redlock://app:***@h1:1,h2:2/3?...");
        assertThat(LockConfig.redacted("redis://app:hunter2@redis_primary:6379"))
                .isEqualTo("redis://app:***@redis_primary:6379");
        assertThat(LockConfig.redacted("redis://app:pa@ss/wo?rd@h:1")).isEqualTo("redis://app:***@h:1");
        assertThat(LockConfig.redacted("redis:app:hunter2@h:1")).doesNotContain("hunter2");
        assertThat(LockConfig.redacted("x://h?trustStorePasword=hunter2&b=1")).isEqualTo("x://h?...");
        assertThatThrownBy(() -> LockConfig.of("redis://:pa^hunter2@127.0.0.1:6379"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("not a valid URI")
                .hasMessageNotContaining("hunter2")
                .hasNoCause();
    }

    @Test
    @DisplayName("percent-decoding follows RFC 3986: '+' stays a plus sign, %2B is one too, %20 a space")
    void percentDecodingKeepsPlus() {
        assertThat(LockConfig.percentDecode("ab+cd", "x")).isEqualTo("ab+cd");
        assertThat(LockConfig.percentDecode("ab%2Bcd%20%C3%A9", "x")).isEqualTo("ab+cd é");
        assertThat(LockConfig.of("x://h?k=a+b").property("k")).contains("a+b");
        assertThatThrownBy(() -> LockConfig.percentDecode("ab%2", "the password"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("the password has a '%' at index 2")
                .hasMessageNotContaining("ab");
    }

    @Test
    @DisplayName("unknown settings are rejected naming the setting, a near miss and the known ones")
    void unknownSettings() {
        LockConfig config = LockConfig.of("x://h?keyprefix=a&provider=p");
        assertThatThrownBy(() -> config.requireKnownSettings(List.of("keyPrefix", "timeout")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("unknown setting 'keyprefix'")
                .hasMessageContaining("did you mean 'keyPrefix'?")
                .hasMessageContaining("known settings: keyPrefix, provider, timeout");
        assertThatThrownBy(() -> LockConfig.of("x://h?colour=red").requireKnownSettings(List.of("timeout")))
                .hasMessageContaining("unknown setting 'colour'")
                .hasMessageNotContaining("did you mean");
        assertThatThrownBy(() -> LockConfig.of("x://h?trustStorePasword=hunter2")
                        .requireKnownSettings(List.of("trustStorePassword")))
                .hasMessageContaining("did you mean 'trustStorePassword'")
                .hasMessageNotContaining("hunter2");
        LockConfig.of("x://h?timeout=1s&provider=p").requireKnownSettings(List.of("timeout"));
    }
}
