package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.LockProvider;
import io.lockstep.spring.boot.LeaderElection;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Two applications on one database compete for leadership, as two processes would. */
class LeaderElectionTest {

    static final AtomicInteger interruptedWork = new AtomicInteger();

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({LockstepAutoConfiguration.class, LockstepLockedAutoConfiguration.class})
    static class LeaderApp {
        @Bean
        LeaderElection queueLeader(LockProvider locks) {
            return LeaderElection.builder(locks, "queue")
                    .leaseTime(Duration.ofSeconds(5))
                    .acquireWait(Duration.ofMillis(200))
                    .retryDelay(Duration.ofMillis(100))
                    .work(context -> {
                        try {
                            while (context.isLeader()) {
                                Thread.sleep(50);
                            }
                        } catch (InterruptedException e) {
                            interruptedWork.incrementAndGet();
                        }
                    });
        }

        @Bean
        LeaderElection reportLeader(LockProvider locks) {
            return LeaderElection.builder(locks, "report")
                    .leaseTime(Duration.ofSeconds(5))
                    .acquireWait(Duration.ofMillis(200))
                    .retryDelay(Duration.ofMillis(100))
                    .holdOnly();
        }
    }

    private static ConfigurableApplicationContext start(String uri) {
        return new SpringApplicationBuilder(LeaderApp.class)
                .web(WebApplicationType.NONE)
                .logStartupInfo(false)
                .properties("lockstep.uri=" + uri, "spring.main.banner-mode=off")
                .run();
    }

    @Test
    @DisplayName("one application leads; when its context closes the work is interrupted and the other leads")
    void handedOverOnShutdown() throws InterruptedException {
        String uri = Starter.h2("leaders-" + UUID.randomUUID());
        interruptedWork.set(0);
        ConfigurableApplicationContext first = start(uri);
        try (ConfigurableApplicationContext second = start(uri)) {
            LeaderElection firstQueue = first.getBean("queueLeader", LeaderElection.class);
            LeaderElection secondQueue = second.getBean("queueLeader", LeaderElection.class);
            await(() -> firstQueue.isLeader() || secondQueue.isLeader());
            LeaderElection leader = firstQueue.isLeader() ? firstQueue : secondQueue;
            LeaderElection follower = leader == firstQueue ? secondQueue : firstQueue;
            ConfigurableApplicationContext leading = leader == firstQueue ? first : second;
            assertThat(follower.isLeader()).isFalse();

            BooleanSupplier reportHere = second.getBean("reportLeader", LeaderElection.class);
            BooleanSupplier reportThere = first.getBean("reportLeader", LeaderElection.class);
            await(() -> reportHere.getAsBoolean() || reportThere.getAsBoolean());
            assertThat(reportHere.getAsBoolean() && reportThere.getAsBoolean()).isFalse();

            AtomicInteger ran = new AtomicInteger();
            assertThat(leader.runIfLeader(ran::incrementAndGet)).isTrue();
            assertThat(follower.runIfLeader(ran::incrementAndGet)).isFalse();
            assertThat(ran).hasValue(1);

            leading.close();
            assertThat(leader.isRunning()).isFalse();
            assertThat(leader.isLeader()).isFalse();
            assertThat(interruptedWork).hasValue(1);
            await(follower::isLeader);
            assertThat(follower.terms()).isEqualTo(1);
        } finally {
            first.close();
        }
    }

    @Test
    @DisplayName("bad settings fail when the bean is built, naming the field")
    void badSettingsFailEarly() {
        try (LockProvider locks = io.lockstep.Locks.open(Starter.h2())) {
            assertThatThrownBy(() -> LeaderElection.builder(locks, "x")
                            .leaseTime(Duration.ZERO)
                            .holdOnly())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("leaseTime");
            assertThatThrownBy(() -> LeaderElection.builder(locks, "")).isInstanceOf(IllegalArgumentException.class);
        }
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(condition.getAsBoolean()).as("within 30 s").isTrue();
    }
}
