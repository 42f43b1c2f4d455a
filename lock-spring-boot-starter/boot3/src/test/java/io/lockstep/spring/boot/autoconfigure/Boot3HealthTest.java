package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.LockProvider;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.health.HealthEndpointAutoConfiguration;
import org.springframework.boot.actuate.health.CompositeHealth;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthComponent;
import org.springframework.boot.actuate.health.HealthContributor;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.SpringVersion;

/**
 * Health on Spring Boot 3.5 as Boot 3's types see it: the starter's Boot 3 indicator (a JDK proxy of Boot
 * 3's {@code HealthIndicator}), through Boot 3's own health endpoint and groups. What it reports (UP,
 * DOWN in bounded time, composites, the switches) is checked by the starter's own {@code
 * LockstepHealthTest}, compiled and run here too; this class stands in for its {@code
 * LockstepHealthTypesTest}, which names Boot 4's types.
 */
class Boot3HealthTest {

    @Test
    @DisplayName("this module runs on Spring Boot 3.5 and Spring Framework 6.2")
    void runsOnBoot3() {
        assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
        assertThat(SpringVersion.getVersion()).startsWith("6.2.");
    }

    @Test
    @DisplayName("one provider is a Boot 3 HealthIndicator, found as a Boot 3 HealthContributor, UP with details")
    void up() {
        Starter.runner().withPropertyValues("lockstep.uri=" + Starter.h2()).run(context -> {
            assertThat(context).hasNotFailed();
            HealthIndicator indicator = (HealthIndicator) context.getBean("lockstepHealthContributor");
            assertThat(context.getBeansOfType(HealthContributor.class)).containsKey("lockstepHealthContributor");
            Health health = indicator.health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails())
                    .containsEntry("backend", "jdbc")
                    .containsEntry("tier", "TRANSACTIONAL")
                    .containsEntry("liveLeases", 0)
                    .containsKey("probe");
            assertThat(health.toString()).doesNotContain(Starter.SECRET);
            assertThat(indicator.getHealth(false).getDetails()).isEmpty();
        });
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

    @Test
    @DisplayName("Boot 3's health endpoint shows it as lockstep, and a health group includes it by that name")
    void endpointAndGroups() {
        Starter.runner()
                .withConfiguration(AutoConfigurations.of(
                        HealthContributorAutoConfiguration.class, HealthEndpointAutoConfiguration.class))
                .withPropertyValues(
                        "lockstep.uri=" + Starter.h2(),
                        "lockstep.providers.orders.uri=" + Starter.h2(),
                        "management.endpoint.health.show-details=always",
                        "management.endpoint.health.group.locks.include=lockstep",
                        "management.endpoint.health.group.orders.include=lockstep/ordersLockstepProvider",
                        "management.endpoint.health.group.orders.show-details=always")
                .run(context -> {
                    HealthEndpoint endpoint = context.getBean(HealthEndpoint.class);
                    assertThat(endpoint.healthForPath("lockstep").getStatus()).isEqualTo(Status.UP);
                    HealthComponent orders = endpoint.healthForPath("lockstep", "ordersLockstepProvider");
                    assertThat(((Health) orders).getDetails()).containsEntry("backend", "jdbc");
                    HealthComponent locks = endpoint.healthForPath("locks");
                    assertThat(locks.getStatus()).isEqualTo(Status.UP);
                    assertThat(((CompositeHealth) locks).getComponents()).containsOnlyKeys("lockstep");
                    HealthComponent ordersGroup = endpoint.healthForPath("orders");
                    assertThat(((CompositeHealth) ordersGroup).getComponents()).containsOnlyKeys("lockstep");
                    assertThat(((CompositeHealth) ((CompositeHealth) ordersGroup)
                                            .getComponents()
                                            .get("lockstep"))
                                    .getComponents())
                            .containsOnlyKeys("ordersLockstepProvider");
                });
    }

    @Test
    @DisplayName("an application injects it as Boot 3's HealthContributor by name, as on Boot 4 (Boot 4's type)")
    void injectedByName() {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withUserConfiguration(UsesTheIndicator.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean("lockstepStatus")).isEqualTo(Status.UP);
                    assertThat(context.getBean("lockstepHealthContributor").toString())
                            .isEqualTo("LockProviderHealthIndicator[lockstepProvider]");
                    assertThat(context.getBeanNamesForType(LockProvider.class)).containsExactly("lockstepProvider");
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
    @DisplayName(
            "a native image gets hints for the indicator's JDK proxy and the health builder it calls by reflection")
    void nativeHints() throws NoSuchMethodException {
        RuntimeHints hints = new RuntimeHints();
        new LockstepRuntimeHints().registerHints(hints, getClass().getClassLoader());
        assertThat(RuntimeHintsPredicates.proxies().forInterfaces(HealthIndicator.class))
                .accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethod(Health.class, "up"))
                .accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethod(Health.Builder.class, "withDetails"))
                .accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection()
                        .onMethod(CompositeHealthContributor.class.getMethod("fromMap", Map.class)))
                .accepts(hints);
    }
}
