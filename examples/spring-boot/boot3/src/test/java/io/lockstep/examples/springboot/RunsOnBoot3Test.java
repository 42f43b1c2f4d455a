package io.lockstep.examples.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;
import org.springframework.core.SpringVersion;

/** The class path this module's tests, and the JVMs they start with it, run on. */
class RunsOnBoot3Test {

    @Test
    @DisplayName("the example's tests here run on Spring Boot 3.5 and Spring Framework 6.2")
    void runsOnBoot3() {
        assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
        assertThat(SpringVersion.getVersion()).startsWith("6.2.");
    }
}
