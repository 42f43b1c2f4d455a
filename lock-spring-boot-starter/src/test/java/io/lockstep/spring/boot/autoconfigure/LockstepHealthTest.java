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
import org.springframework.boot.test.context.FilteredClassLoader;

/**
 * The health check of each provider, on both Boot lines (read through {@link Healths}): UP with details,
 * DOWN in bounded time or with the reason, a composite for several providers, and when it is not there.
 */
class LockstepHealthTest {

    private static final String CONTRIBUTOR = "lockstepHealthContributor";

    @Test
    @DisplayName("a reachable backend is UP with its kind, tier, URI without secrets, live and lost leases")
    void upWithDetails() {
        Starter.runner().withPropertyValues("lockstep.uri=" + Starter.h2()).run(context -> {
            Object health = context.getBean(CONTRIBUTOR);
            LockProvider locks = context.getBean(LockProvider.class);
            Lease held = locks.tryAcquire("held", LeaseOptions.of(Duration.ofSeconds(30)))
                    .orElseThrow();
            Lease expiring = locks.tryAcquire("expiring", LeaseOptions.of(Duration.ofMillis(200)))
                    .orElseThrow();
            assertThat(expiring.lost().toCompletableFuture().get(30, TimeUnit.SECONDS))
                    .isEqualTo(LossReason.EXPIRED);
            Healths.Reading up = Healths.await(
                    health, r -> Integer.valueOf(1).equals(r.details().get("leasesLostRecently")), 30);
            assertThat(up.status()).isEqualTo("UP");
            assertThat(up.details())
                    .containsEntry("backend", "jdbc")
                    .containsEntry("tier", "TRANSACTIONAL")
                    .containsEntry("liveLeases", 1)
                    .containsEntry("leasesLostRecently", 1)
                    .containsKey("lastLoss");
            assertThat(up.text()).doesNotContain(Starter.SECRET);
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
                        Object health = context.getBean(CONTRIBUTOR);
                        assertThat(Healths.read(health).status()).isEqualTo("UP");
                        redis.pause();
                        try {
                            Healths.Reading down = CompletableFuture.supplyAsync(() -> Healths.read(health))
                                    .get(30, TimeUnit.SECONDS);
                            assertThat(down.status()).isEqualTo("DOWN");
                            assertThat(down.details().get("error").toString()).contains("did not answer within PT0.5S");
                            Healths.Reading again = CompletableFuture.supplyAsync(() -> Healths.read(health))
                                    .get(30, TimeUnit.SECONDS);
                            assertThat(again.status()).isEqualTo("DOWN");
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
                        Object health = context.getBean(CONTRIBUTOR);
                        redis.kill();
                        Healths.Reading down =
                                Healths.await(health, r -> r.status().equals("DOWN"), 60);
                        assertThat(down.status()).as(down.text()).isEqualTo("DOWN");
                        assertThat(down.details().get("error").toString())
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
                    Object all = context.getBean(CONTRIBUTOR);
                    assertThat(Healths.read(Healths.member(all, "ordersLockstepProvider"))
                                    .status())
                            .isEqualTo("UP");
                    assertThat(Healths.member(all, "lockstepProvider")).isNotNull();
                });
    }

    @Test
    @DisplayName(
            "no health contributor without a provider, when disabled (itself or by default), or without Boot's health types")
    void conditions() {
        Starter.runner().run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(CONTRIBUTOR));
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2(), "management.health.lockstep.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(CONTRIBUTOR));
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2(), "management.health.defaults.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(CONTRIBUTOR));
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withClassLoader(new FilteredClassLoader(
                        "org.springframework.boot.health.contributor", "org.springframework.boot.actuate.health"))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(CONTRIBUTOR));
    }
}
