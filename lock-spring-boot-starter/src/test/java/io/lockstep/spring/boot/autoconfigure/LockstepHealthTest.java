package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LossReason;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class LockstepHealthTest {

    @Test
    @DisplayName("a reachable backend is UP with its kind, tier, URI without secrets, live and lost leases")
    void upWithDetails() {
        Starter.runner().withPropertyValues("lockstep.uri=" + Starter.h2()).run(context -> {
            HealthIndicator health = (HealthIndicator) context.getBean("lockstepHealthContributor");
            LockProvider locks = context.getBean(LockProvider.class);
            Lease held = locks.tryAcquire("held", LeaseOptions.of(Duration.ofSeconds(30)))
                    .orElseThrow();
            Lease expiring = locks.tryAcquire("expiring", LeaseOptions.of(Duration.ofMillis(200)))
                    .orElseThrow();
            assertThat(expiring.lost().toCompletableFuture().get(30, TimeUnit.SECONDS))
                    .isEqualTo(LossReason.EXPIRED);
            Health up = awaitDetail(health, "leasesLostRecently", 1);
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            assertThat(up.getDetails())
                    .containsEntry("backend", "jdbc")
                    .containsEntry("tier", "TRANSACTIONAL")
                    .containsEntry("liveLeases", 1)
                    .containsKey("lastLoss");
            assertThat(up.toString()).doesNotContain(Starter.SECRET);
            held.release();
            expiring.close();
        });
    }

    @Test
    @DisplayName("a backend that stopped answering is DOWN within the health timeout, never a hang")
    void pausedBackendIsDownInBoundedTime() {
        try (RedisServer redis = RedisServer.start()) {
            Starter.runner()
                    .withPropertyValues("lockstep.uri=" + redis.uri(), "lockstep.health.timeout=500ms")
                    .run(context -> {
                        HealthIndicator health = (HealthIndicator) context.getBean("lockstepHealthContributor");
                        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
                        redis.pause();
                        try {
                            Health down = CompletableFuture.supplyAsync(health::health)
                                    .get(30, TimeUnit.SECONDS);
                            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                            assertThat(down.getDetails().get("error").toString())
                                    .contains("did not answer within PT0.5S");
                            Health again = CompletableFuture.supplyAsync(health::health)
                                    .get(30, TimeUnit.SECONDS);
                            assertThat(again.getStatus()).isEqualTo(Status.DOWN);
                        } finally {
                            redis.resume();
                        }
                    });
        }
    }

    @Test
    @DisplayName("a backend that is gone is DOWN with Lockstep's reason, naming the address")
    void stoppedBackendIsDownWithTheReason() {
        RedisServer redis = RedisServer.start();
        try {
            Starter.runner()
                    .withPropertyValues("lockstep.uri=" + redis.uri() + "?timeout=1s")
                    .run(context -> {
                        HealthIndicator health = (HealthIndicator) context.getBean("lockstepHealthContributor");
                        redis.kill();
                        Health down = awaitStatus(health, Status.DOWN);
                        assertThat(down.getDetails().get("error").toString())
                                .contains("BackendUnavailableException")
                                .contains(Integer.toString(redis.port()));
                    });
        } finally {
            redis.close();
        }
    }

    @Test
    @DisplayName("several providers are one composite, keyed by bean name")
    void compositeForSeveralProviders() {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2(), "lockstep.providers.orders.uri=" + Starter.h2())
                .run(context -> {
                    CompositeHealthContributor all =
                            (CompositeHealthContributor) context.getBean("lockstepHealthContributor");
                    HealthContributor orders = all.getContributor("ordersLockstepProvider");
                    assertThat(((HealthIndicator) orders).health().getStatus()).isEqualTo(Status.UP);
                    assertThat(all.getContributor("lockstepProvider")).isNotNull();
                });
    }

    @Test
    @DisplayName("no health contributor without a provider, when disabled, or without spring-boot-health")
    void conditions() {
        Starter.runner().run(context -> assertThat(context).doesNotHaveBean("lockstepHealthContributor"));
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2(), "management.health.lockstep.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("lockstepHealthContributor"));
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean("lockstepHealthContributor");
                });
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
                    assertThat(context.getBean("lockstepHealthContributor"))
                            .isInstanceOf(LockProviderHealthIndicator.class);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class UsesTheIndicator {
        @Bean
        Status lockstepStatus(@Qualifier("lockstepHealthContributor") HealthContributor lockstep) {
            return ((HealthIndicator) lockstep).health().getStatus();
        }
    }

    private static Health awaitDetail(HealthIndicator indicator, String detail, Object value)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Health health = indicator.health();
        while (!value.equals(health.getDetails().get(detail)) && System.nanoTime() < deadline) {
            Thread.sleep(20);
            health = indicator.health();
        }
        return health;
    }

    private static Health awaitStatus(HealthIndicator indicator, Status status) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Health health = indicator.health();
        while (!status.equals(health.getStatus()) && System.nanoTime() < deadline) {
            Thread.sleep(100);
            health = indicator.health();
        }
        assertThat(health.getStatus()).as(health.toString()).isEqualTo(status);
        return health;
    }
}
