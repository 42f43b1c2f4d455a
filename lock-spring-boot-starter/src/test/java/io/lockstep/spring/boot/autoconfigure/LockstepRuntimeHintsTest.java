package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.spring.boot.Locked;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.support.SpringFactoriesLoader;

class LockstepRuntimeHintsTest {

    @Test
    @DisplayName("the hints registrar is listed in aot.factories and covers the ServiceLoader file and @Locked")
    void hintsAreRegistered() {
        RuntimeHints hints = new RuntimeHints();
        SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
                .load(RuntimeHintsRegistrar.class)
                .forEach(registrar -> registrar.registerHints(hints, getClass().getClassLoader()));
        assertThat(RuntimeHintsPredicates.resource()
                        .forResource("META-INF/services/io.lockstep.spi.LockProviderFactory"))
                .accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(Locked.class)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(LockstepProperties.class))
                .accepts(hints);
    }
}
