package io.lockstep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LockNamesTest {

    @ParameterizedTest
    @ValueSource(strings = {"a", "a/b", "*", "'; DROP TABLE x; --", "{x}", "\u6f22\ud83d\udd12", " "})
    @DisplayName("ordinary and metacharacter names are valid as they are")
    void validNames(String name) {
        assertThat(LockNames.requireValid(name)).isSameAs(name);
    }

    @Test
    @DisplayName("the limit is 256 bytes of UTF-8, not 256 characters")
    void limitCountsBytes() {
        assertThat(LockNames.requireValid("x".repeat(256))).hasSize(256);
        assertThatThrownBy(() -> LockNames.requireValid("x".repeat(257)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("257 bytes");
        assertThatThrownBy(() -> LockNames.requireValid("\u00e9".repeat(129)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("258 bytes");
    }

    @Test
    @DisplayName("null, empty, control characters and unpaired surrogates are rejected with the rule named")
    void invalidNames() {
        assertThatThrownBy(() -> LockNames.requireValid(null)).hasMessageContaining("null");
        assertThatThrownBy(() -> LockNames.requireValid("")).hasMessageContaining("empty");
        assertThatThrownBy(() -> LockNames.requireValid("a\u0000b"))
                .hasMessageContaining("U+0000")
                .hasMessageContaining("index 1")
                .hasMessageContaining("'a\\u0000b'");
        assertThatThrownBy(() -> LockNames.requireValid("tab\there")).hasMessageContaining("U+0009");
        assertThatThrownBy(() -> LockNames.requireValid("x\u0085")).hasMessageContaining("U+0085");
        assertThatThrownBy(() -> LockNames.requireValid("bad\ud800")).hasMessageContaining("surrogate");
        assertThatThrownBy(() -> LockNames.requireValid("\udc00bad")).hasMessageContaining("surrogate");
    }
}
