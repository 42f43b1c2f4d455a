package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The health bean as Boot 4's types see it (Boot 4 only: the boot3 module has {@code Boot3HealthTest}
 * instead); what it reports is checked on both lines by {@link LockstepHealthTest}.
 */
class LockstepHealthTypesTest {

    @Test
    @DisplayName("one provider is a LockProviderHealthIndicator, several a CompositeHealthContributor of them")
    void types() {
        Starter.runner().withPropertyValues("lockstep.uri=" + Starter.h2()).run(context -> {
            assertThat(context.getBeansOfType(HealthContributor.class)).containsKey("lockstepHealthContributor");
            assertThat(context.getBean("lockstepHealthContributor")).isInstanceOf(LockProviderHealthIndicator.class);
            assertThat(((HealthIndicator) context.getBean("lockstepHealthContributor"))
                            .health(false)
                            .getDetails())
                    .isEmpty();
        });
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2(), "lockstep.providers.orders.uri=" + Starter.h2())
                .run(context -> assertThat(((CompositeHealthContributor) context.getBean("lockstepHealthContributor"))
                                .getContributor("ordersLockstepProvider"))
                        .isInstanceOf(LockProviderHealthIndicator.class));
    }

    @Test
    @DisplayName("an application injects it as a HealthContributor by name (its declared type), as on Boot 3")
    void injectedByName() {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withUserConfiguration(UsesTheIndicator.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean("lockstepStatus")).isEqualTo(Status.UP);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class UsesTheIndicator {
        @Bean
        Status lockstepStatus(@Qualifier("lockstepHealthContributor") HealthContributor lockstep) {
            return ((HealthIndicator) lockstep).health().getStatus();
        }
    }

    @Test
    @DisplayName("the application's own lockstepHealthContributor wins")
    void applicationsOwn() {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withBean(
                        "lockstepHealthContributor",
                        HealthIndicator.class,
                        () -> () -> Health.unknown().build())
                .run(context -> assertThat(((HealthIndicator) context.getBean("lockstepHealthContributor"))
                                .health()
                                .getStatus())
                        .isEqualTo(Status.UNKNOWN));
    }
}
