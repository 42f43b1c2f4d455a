package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockTimeoutException;
import io.lockstep.spring.boot.CurrentLease;
import io.lockstep.spring.boot.FencingToken;
import io.lockstep.spring.boot.Locked;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class LockedMethodsTest {

    private static final LeaseOptions TEN_SECONDS = LeaseOptions.of(Duration.ofSeconds(10));

    private final ApplicationContextRunner runner =
            Starter.runner().withPropertyValues("lockstep.uri=" + Starter.h2()).withBean(Jobs.class);

    /**
     * A bean with @Locked methods; each records what it saw. The test reads the records through methods:
     * the bean is a class-based proxy, whose own fields are never set.
     */
    static class Jobs {
        int runs() {
            return runs.get();
        }

        Optional<Lease> seen() {
            return seen;
        }

        boolean heldElsewhereWhileRunning() {
            return heldElsewhereWhileRunning;
        }

        boolean awaitStarted() throws InterruptedException {
            return started.await(30, TimeUnit.SECONDS);
        }

        boolean interrupted() {
            return interrupted;
        }

        boolean validAfterSeveralLeaseTimes() {
            return validAfterSeveralLeaseTimes;
        }

        final AtomicInteger runs = new AtomicInteger();
        volatile Optional<Lease> seen = Optional.empty();
        volatile boolean heldElsewhereWhileRunning;
        final CountDownLatch started = new CountDownLatch(1);
        volatile boolean interrupted;
        volatile boolean validAfterSeveralLeaseTimes;

        @Locked(name = "report")
        void report(LockProvider probe) {
            runs.incrementAndGet();
            seen = CurrentLease.get();
            heldElsewhereWhileRunning = probe.tryAcquire("report", TEN_SECONDS).isEmpty();
        }

        @Locked(name = "invoice-#{#id}")
        Optional<String> invoice(long id) {
            runs.incrementAndGet();
            return CurrentLease.get().map(Lease::name);
        }

        @Locked(name = "fenced")
        Long fenced(@FencingToken long fence) {
            return fence;
        }

        @Locked(name = "fenced-optional")
        OptionalLong fencedOptional(@FencingToken OptionalLong fence) {
            return fence;
        }

        @Locked(name = "strict", whenHeld = Locked.WhenHeld.FAIL)
        void strict() {
            runs.incrementAndGet();
        }

        @Locked(name = "tick", holdAtLeast = "${test.hold:2s}")
        void tick() {
            runs.incrementAndGet();
        }

        @Locked(name = "fragile", lease = "300ms", renew = Locked.Renew.NO, interruptOnLoss = true)
        void fragile() {
            started.countDown();
            try {
                Thread.sleep(30_000);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }

        @Locked(name = "long-running", lease = "1s", renew = Locked.Renew.YES)
        void longRunning() throws InterruptedException {
            Thread.sleep(3_000);
            validAfterSeveralLeaseTimes = CurrentLease.get().orElseThrow().isValid();
        }
    }

    @Test
    @DisplayName("a @Locked method runs under its lease, visible through CurrentLease, and the lock is free after")
    void runsUnderTheLease() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            LockProvider locks = context.getBean(LockProvider.class);
            jobs.report(locks);
            assertThat(jobs.runs()).isEqualTo(1);
            assertThat(jobs.heldElsewhereWhileRunning()).isTrue();
            assertThat(jobs.seen())
                    .hasValueSatisfying(lease -> assertThat(lease.name()).isEqualTo("report"));
            assertThat(CurrentLease.get()).isEmpty();
            try (Lease after = locks.tryAcquire("report", TEN_SECONDS).orElseThrow()) {
                assertThat(after.isValid()).isTrue();
            }
        });
    }

    @Test
    @DisplayName("the name is a SpEL template over the arguments")
    void spelName() {
        runner.run(
                context -> assertThat(context.getBean(Jobs.class).invoice(42)).contains("invoice-42"));
    }

    @Test
    @DisplayName("a @FencingToken parameter receives the lease's fence, whatever the caller passed")
    void fencingTokenIsPassed() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            long first = jobs.fenced(-1);
            long second = jobs.fenced(-1);
            assertThat(first).isPositive();
            assertThat(second).isGreaterThan(first);
            assertThat(jobs.fencedOptional(OptionalLong.empty())).isPresent();
        });
    }

    @Test
    @DisplayName("held elsewhere: the call is skipped (null, or Optional.empty()) by default")
    void skippedWhenHeld() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            try (Lease held = context.getBean(LockProvider.class)
                    .tryAcquire("invoice-7", TEN_SECONDS)
                    .orElseThrow()) {
                assertThat(jobs.invoice(7)).isEmpty();
                assertThat(jobs.runs()).isZero();
                assertThat(held.isValid()).isTrue();
            }
        });
    }

    @Test
    @DisplayName("held elsewhere with whenHeld = FAIL: LockTimeoutException naming the lock")
    void failsWhenHeld() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            try (Lease held = context.getBean(LockProvider.class)
                    .tryAcquire("strict", TEN_SECONDS)
                    .orElseThrow()) {
                assertThatThrownBy(jobs::strict)
                        .isInstanceOf(LockTimeoutException.class)
                        .hasMessageContaining("strict");
                assertThat(jobs.runs()).isZero();
                assertThat(held.isValid()).isTrue();
            }
        });
    }

    @Test
    @DisplayName("lockstep.locked.when-held=fail makes failing the default")
    void failByProperty() {
        runner.withPropertyValues("lockstep.locked.when-held=fail").run(context -> {
            try (Lease held = context.getBean(LockProvider.class)
                    .tryAcquire("invoice-1", TEN_SECONDS)
                    .orElseThrow()) {
                assertThatThrownBy(() -> context.getBean(Jobs.class).invoice(1))
                        .isInstanceOf(LockTimeoutException.class);
                assertThat(held.isValid()).isTrue();
            }
        });
    }

    @Test
    @DisplayName("holdAtLeast keeps the lock after a quick return, then gives it back")
    void holdAtLeast() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            LockProvider locks = context.getBean(LockProvider.class);
            jobs.tick();
            assertThat(locks.tryAcquire("tick", TEN_SECONDS))
                    .as("right after the call")
                    .isEmpty();
            jobs.tick();
            assertThat(jobs.runs()).as("a second tick is skipped").isEqualTo(1);
            try (Lease later = locks.tryAcquire("tick", TEN_SECONDS.withWaitTime(Duration.ofSeconds(30)))
                    .orElseThrow()) {
                assertThat(later.isValid()).isTrue();
            }
        });
    }

    @Test
    @DisplayName("interruptOnLoss interrupts the method when its lease is lost")
    void interruptedOnLoss() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            CompletableFuture<Void> call = CompletableFuture.runAsync(jobs::fragile);
            assertThat(jobs.awaitStarted()).isTrue();
            call.get(30, TimeUnit.SECONDS);
            assertThat(jobs.interrupted()).isTrue();
        });
    }

    @Test
    @DisplayName("a renewed lease stays valid while the method runs several lease times")
    void renewedWhileRunning() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            jobs.longRunning();
            assertThat(jobs.validAfterSeveralLeaseTimes()).isTrue();
        });
    }

    @Test
    @DisplayName("provider = \"name\" takes the lock on that named provider")
    void namedProvider() {
        String orders = Starter.h2();
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2(), "lockstep.providers.orders.uri=" + orders)
                .withBean(OrdersJob.class)
                .run(context -> {
                    LockProvider ordersLocks = context.getBean("ordersLockstepProvider", LockProvider.class);
                    assertThat(context.getBean(OrdersJob.class).run(ordersLocks))
                            .isTrue();
                });
    }

    @Test
    @DisplayName(
            "a context that closes during a @Locked call lets it finish under its lease before the provider closes")
    void shutdownWaitsForRunningCalls() throws Exception {
        SlowJob.started = new CountDownLatch(1);
        SlowJob.validAtTheEnd = new CompletableFuture<>();
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withBean(SlowJob.class)
                .run(context -> {
                    SlowJob job = context.getBean(SlowJob.class);
                    CompletableFuture.runAsync(job::run);
                    assertThat(SlowJob.started.await(30, TimeUnit.SECONDS)).isTrue();
                });
        assertThat(SlowJob.validAtTheEnd.get(30, TimeUnit.SECONDS))
                .as("the lease was still valid when the call ended, during shutdown")
                .isTrue();
    }

    static class SlowJob {
        static volatile CountDownLatch started;
        static volatile CompletableFuture<Boolean> validAtTheEnd;

        @Locked(name = "slow")
        void run() {
            started.countDown();
            try {
                Thread.sleep(1_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            validAtTheEnd.complete(CurrentLease.get().orElseThrow().isValid());
        }
    }

    static class OrdersJob {
        @Locked(name = "orders-job", provider = "orders")
        Boolean run(LockProvider orders) {
            return orders.tryAcquire("orders-job", TEN_SECONDS).isEmpty();
        }
    }

    @Test
    @DisplayName("a bad attribute fails start-up naming the method, the attribute and the value")
    void badAttributeFailsStartUp() {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withBean(BadLease.class)
                .run(context -> assertThat(LockstepAutoConfigurationTest.messages(context.getStartupFailure()))
                        .contains("BadLease.run()")
                        .contains("lease 'soon'")
                        .contains("is not a duration"));
    }

    static class BadLease {
        @Locked(name = "x", lease = "soon")
        void run() {}
    }

    @Test
    @DisplayName("skipping a method that returns a primitive is refused at start-up")
    void skipOfAPrimitiveIsRefused() {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withBean(SkipsPrimitive.class)
                .run(context -> assertThat(LockstepAutoConfigurationTest.messages(context.getStartupFailure()))
                        .contains("SkipsPrimitive.count()")
                        .contains("cannot skip a method that returns int"));
    }

    @Test
    @DisplayName("an asynchronous result is refused at start-up: the lease would end before the work")
    void asynchronousResultIsRefused() {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withBean(Asynchronous.class)
                .run(context -> assertThat(LockstepAutoConfigurationTest.messages(context.getStartupFailure()))
                        .contains("Asynchronous.later()")
                        .contains("is asynchronous"));
    }

    static class Asynchronous {
        @Locked(name = "x")
        CompletableFuture<String> later() {
            return CompletableFuture.completedFuture("x");
        }
    }

    static class SkipsPrimitive {
        @Locked(name = "x")
        int count() {
            return 1;
        }
    }

    @Test
    @DisplayName("a @Locked bean without any provider fails start-up: never a lock that does nothing")
    void noProviderFailsStartUp() {
        Starter.runner().withBean(Jobs.class).run(context -> assertThat(
                        LockstepAutoConfigurationTest.messages(context.getStartupFailure()))
                .contains("needs a LockProvider")
                .contains("lockstep.uri"));
    }

    @Test
    @DisplayName("lockstep.locked.enabled=false leaves @Locked methods unproxied")
    void disabled() {
        Starter.runner()
                .withPropertyValues("lockstep.locked.enabled=false")
                .withBean(Jobs.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(org.springframework.aop.support.AopUtils.isAopProxy(context.getBean(Jobs.class)))
                            .isFalse();
                });
    }
}
