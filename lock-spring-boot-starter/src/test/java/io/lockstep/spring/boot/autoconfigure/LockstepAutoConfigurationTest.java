package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.Locks;
import io.lockstep.spring.boot.ManagedLockProvider;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@ExtendWith(OutputCaptureExtension.class)
class LockstepAutoConfigurationTest {

    private static final LeaseOptions TEN_SECONDS = LeaseOptions.of(Duration.ofSeconds(10));

    @Nested
    @DisplayName("the default provider")
    class DefaultProvider {

        @Test
        @DisplayName("without lockstep.uri there is no provider, and the context starts")
        void noUriNoProvider() {
            Starter.runner().run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context).doesNotHaveBean(LockProvider.class);
            });
        }

        @Test
        @DisplayName("lockstep.uri opens a provider named default that takes real locks")
        void uriOpensAProvider() {
            Starter.runner().withPropertyValues("lockstep.uri=" + Starter.h2()).run(context -> {
                assertThat(context).hasSingleBean(LockProvider.class);
                LockProvider locks = context.getBean(LockProvider.class);
                assertThat(locks).isInstanceOf(ManagedLockProvider.class);
                assertThat(((ManagedLockProvider) locks).name()).isEqualTo("default");
                assertThat(locks.info().name()).isEqualTo("jdbc");
                try (Lease lease = locks.tryAcquire("a", TEN_SECONDS).orElseThrow()) {
                    assertThat(lease.isValid()).isTrue();
                    assertThat(locks.tryAcquire("a", TEN_SECONDS)).isEmpty();
                }
            });
        }

        @Test
        @DisplayName("backs off when the application defines its own provider")
        void backsOffForTheApplicationsProvider() {
            Starter.runner()
                    .withPropertyValues("lockstep.uri=" + Starter.h2())
                    .withUserConfiguration(OwnProvider.class)
                    .run(context -> {
                        assertThat(context).hasSingleBean(LockProvider.class);
                        assertThat(context.getBean(LockProvider.class)).isNotInstanceOf(ManagedLockProvider.class);
                    });
        }

        @Test
        @DisplayName("does not clash with a ShedLock provider bean named lockProvider, as ShedLock's guide names it")
        void noClashWithShedLocksBeanName() {
            Starter.runner()
                    .withPropertyValues("lockstep.uri=" + Starter.h2())
                    .withBean(
                            "lockProvider",
                            net.javacrumbs.shedlock.core.LockProvider.class,
                            () -> c -> java.util.Optional.empty())
                    .run(context -> {
                        assertThat(context).hasNotFailed().hasSingleBean(LockProvider.class);
                        assertThat(context).hasBean("lockstepProvider");
                    });
        }

        @Test
        @DisplayName("is closed when the context closes, after the beans that hold its leases")
        void closedAfterTheBeansThatHoldLeases() {
            AtomicReference<LockProvider> provider = new AtomicReference<>();
            LeaseHolder.releasedAtShutdown.set(null);
            Starter.runner()
                    .withPropertyValues("lockstep.uri=" + Starter.h2())
                    .withUserConfiguration(LeaseHolderConfiguration.class)
                    .run(context -> {
                        provider.set(context.getBean(LockProvider.class));
                        assertThat(context.getBean(LeaseHolder.class).lease.isValid())
                                .isTrue();
                    });
            assertThat(LeaseHolder.releasedAtShutdown.get())
                    .as("the holder's release at shutdown found the provider open and the lock held")
                    .isTrue();
            assertThatThrownBy(() -> provider.get().tryAcquire("x", TEN_SECONDS))
                    .isInstanceOf(IllegalStateException.class);
        }

        @Test
        @DisplayName("uses the lockstep.runtime bounds, and a runtime bean of the application if there is one")
        void runtimeFromProperties() {
            Starter.runner()
                    .withPropertyValues("lockstep.runtime.retry-attempts=5", "lockstep.runtime.close-timeout=2s")
                    .run(context -> {
                        LockRuntime runtime = context.getBean(LockRuntime.class);
                        assertThat(runtime.retryAttempts()).isEqualTo(5);
                        assertThat(runtime.closeTimeout()).isEqualTo(Duration.ofSeconds(2));
                    });
            LockRuntime own = LockRuntime.builder().retryAttempts(7).build();
            Starter.runner().withBean(LockRuntime.class, () -> own).run(context -> assertThat(
                            context.getBean(LockRuntime.class))
                    .isSameAs(own));
        }
    }

    @Nested
    @DisplayName("named providers")
    class NamedProviders {

        @Test
        @DisplayName("each lockstep.providers.<name> is a bean qualified by its name; the default one is primary")
        void namedProvidersAreQualifiedBeans() {
            Starter.runner()
                    .withPropertyValues(
                            "lockstep.uri=" + Starter.h2(),
                            "lockstep.providers.orders.uri=" + Starter.h2(),
                            "lockstep.providers.billing.uri=" + Starter.h2())
                    .withUserConfiguration(UsesOrders.class)
                    .run(context -> {
                        assertThat(context).getBeans(LockProvider.class).hasSize(3);
                        assertThat(((ManagedLockProvider) context.getBean(LockProvider.class)).name())
                                .isEqualTo("default");
                        assertThat(((ManagedLockProvider) context.getBean(UsesOrders.class).orders).name())
                                .isEqualTo("orders");
                        assertThat(((ManagedLockProvider) context.getBean("billingLockstepProvider")).name())
                                .isEqualTo("billing");
                    });
        }

        @Test
        @DisplayName("named providers are made even when the application defines its own default")
        void namedBesideTheApplicationsOwn() {
            Starter.runner()
                    .withPropertyValues("lockstep.providers.orders.uri=" + Starter.h2())
                    .withUserConfiguration(OwnProvider.class)
                    .run(context -> {
                        assertThat(context).getBeans(LockProvider.class).hasSize(2);
                        assertThat(context).hasBean("ordersLockstepProvider");
                    });
        }
    }

    @Nested
    @DisplayName("bad configuration fails start-up")
    class BadConfiguration {

        @Test
        @DisplayName("a URI without a scheme, naming the property and never the password")
        void uriWithoutScheme(CapturedOutput output) {
            Starter.runner()
                    .withPropertyValues("lockstep.uri=//sa:" + Starter.SECRET + "@localhost:6379")
                    .run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(messages(context.getStartupFailure()))
                                .contains("lockstep.uri")
                                .contains("no scheme")
                                .doesNotContain(Starter.SECRET);
                    });
            assertThat(output.getAll()).doesNotContain(Starter.SECRET);
        }

        @Test
        @DisplayName("a scheme no module on the class path serves, naming the artifact to add")
        void missingBackendModule(CapturedOutput output) {
            Starter.runner()
                    .withPropertyValues("lockstep.uri=etcd://root:" + Starter.SECRET + "@127.0.0.1:2379")
                    .run(context -> {
                        assertThat(context).hasFailed();
                        Throwable failure = context.getStartupFailure();
                        assertThat(messages(failure))
                                .contains("lockstep.uri: no Lockstep provider for scheme 'etcd'")
                                .contains("io.lockstep:lock-etcd")
                                .doesNotContain(Starter.SECRET);
                        FailureAnalysis analysis = new LockstepFailureAnalyzer().analyze(failure);
                        assertThat(analysis.getDescription())
                                .contains("lock-etcd")
                                .doesNotContain(Starter.SECRET);
                        assertThat(analysis.getAction()).contains("lockstep.uri");
                    });
            assertThat(output.getAll()).doesNotContain(Starter.SECRET);
        }

        @Test
        @DisplayName("a backend's own refusal of a setting, in Lockstep's words")
        void backendRefusesASetting() {
            Starter.runner()
                    .withPropertyValues("lockstep.uri=" + Starter.h2() + "&table=no;such")
                    .run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(context.getStartupFailure())
                                .rootCause()
                                .isInstanceOf(LockConfigurationException.class);
                        assertThat(messages(context.getStartupFailure()))
                                .contains("table")
                                .doesNotContain(Starter.SECRET);
                    });
        }

        @Test
        @DisplayName("a zero lease time, naming the property, the value and the rule")
        void zeroLeaseTime() {
            Starter.runner().withPropertyValues("lockstep.lease.time=0s").run(context -> assertThat(
                            messages(context.getStartupFailure()))
                    .contains("lease.time")
                    .contains("PT0S")
                    .contains("leaseTime must be at least"));
        }

        @Test
        @DisplayName("runtime bounds out of range, naming each property, value and rule")
        void runtimeOutOfRange() {
            Starter.runner()
                    .withPropertyValues("lockstep.runtime.retry-attempts=0", "lockstep.runtime.retry-window=2h")
                    .run(context -> assertThat(messages(context.getStartupFailure()))
                            .contains("runtime.retryAttempts")
                            .contains("retryAttempts must be between 1 and 10, was 0")
                            .contains("runtime.retryWindow")
                            .contains("PT2H"));
        }

        @Test
        @DisplayName("a max hold without renewal, and a provider name that is not a name")
        void inconsistentSettings() {
            Starter.runner()
                    .withPropertyValues(
                            "lockstep.lease.auto-renew=false",
                            "lockstep.lease.max-hold=1h",
                            "lockstep.providers.Bad_Name.uri=" + Starter.h2())
                    .run(context -> assertThat(messages(context.getStartupFailure()))
                            .contains("lease.maxHold")
                            .contains("needs lockstep.lease.auto-renew=true")
                            .contains("lockstep.providers.Bad_Name")
                            .doesNotContain(Starter.SECRET));
        }

        @Test
        @DisplayName("a duration that does not parse, naming the property and the value")
        void unparsableDuration() {
            Starter.runner().withPropertyValues("lockstep.health.timeout=soon").run(context -> assertThat(
                            messages(context.getStartupFailure()))
                    .contains("lockstep.health.timeout")
                    .contains("soon"));
        }
    }

    static String messages(Throwable failure) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            all.append(t).append('\n');
        }
        return all.toString();
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnProvider {
        @Bean(destroyMethod = "close")
        LockProvider myLocks() {
            return Locks.open(Starter.h2());
        }
    }

    static class UsesOrders {
        final LockProvider orders;

        UsesOrders(@Qualifier("orders") LockProvider orders) {
            this.orders = orders;
        }
    }

    /** A bean that holds a lease for its whole life and gives it back when the context closes. */
    static class LeaseHolder {
        static final AtomicReference<Boolean> releasedAtShutdown = new AtomicReference<>();
        final Lease lease;

        LeaseHolder(LockProvider locks) {
            this.lease = locks.acquire(
                    "held-for-life", LeaseOptions.of(Duration.ofSeconds(30)).withAutoRenew());
        }

        void giveBack() {
            releasedAtShutdown.set(lease.release());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LeaseHolderConfiguration {
        @Bean(destroyMethod = "giveBack")
        LeaseHolder leaseHolder(LockProvider locks) {
            return new LeaseHolder(locks);
        }
    }
}
