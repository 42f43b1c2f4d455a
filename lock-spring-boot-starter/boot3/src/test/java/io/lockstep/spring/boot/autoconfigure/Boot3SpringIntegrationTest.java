package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.util.ClassUtils;

/**
 * lock-spring-integration is built for Spring Integration 7 (Boot 4); Boot 3.5 has Integration 6.5. There the
 * starter must not make its registry, nor fail start-up on a class 6.5 lacks.
 */
class Boot3SpringIntegrationTest {

    @Test
    @DisplayName("beside Spring Integration 6.5 the starter makes no Lockstep LockRegistry and starts")
    void noRegistryOnIntegration6() {
        assertThat(ClassUtils.isPresent("org.springframework.integration.core.MessageSource", null))
                .as("Spring Integration on the class path")
                .isTrue();
        assertThat(ClassUtils.isPresent("org.springframework.integration.support.locks.DistributedLock", null))
                .as("Integration 7's DistributedLock")
                .isFalse();
        Starter.runner().withPropertyValues("lockstep.uri=" + Starter.h2()).run(context -> assertThat(context)
                .hasNotFailed()
                .doesNotHaveBean("lockstepLockRegistry")
                .hasBean("lockstepShedLockProvider"));
    }
}
