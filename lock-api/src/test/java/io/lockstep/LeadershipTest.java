package io.lockstep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.ForwardingLockProvider;
import io.lockstep.spi.TestBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class LeadershipTest {

    @Test
    @DisplayName("one leader at a time; closing hands leadership to the other process at once")
    void oneLeaderAndHandOver() throws Exception {
        try (LockProvider locks = Locks.open("memory-test://leader")) {
            List<String> events = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch firstLeads = new CountDownLatch(1);
            CountDownLatch secondLeads = new CountDownLatch(1);
            Leadership first = Leadership.builder(locks, "queue")
                    .leaseTime(Duration.ofSeconds(10))
                    .start(ctx -> {
                        events.add("first+");
                        firstLeads.countDown();
                        try {
                            while (ctx.isLeader()) {
                                Thread.sleep(5);
                            }
                        } finally {
                            events.add("first-");
                        }
                    });
            assertThat(firstLeads.await(5, TimeUnit.SECONDS)).isTrue();
            Leadership second = Leadership.builder(locks, "queue")
                    .leaseTime(Duration.ofSeconds(10))
                    .start(ctx -> {
                        events.add("second+");
                        secondLeads.countDown();
                        while (ctx.isLeader()) {
                            Thread.sleep(5);
                        }
                    });
            assertThat(secondLeads.await(300, TimeUnit.MILLISECONDS))
                    .as("second must wait")
                    .isFalse();
            long closing = System.nanoTime();
            first.close();
            assertThat(secondLeads.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - closing)).isLessThan(Duration.ofSeconds(3));
            assertThat(events).containsExactly("first+", "first-", "second+");
            assertThat(second.isLeader()).isTrue();
            assertThat(first.terms()).isEqualTo(1);
            second.close();
            assertThat(second.isLeader()).isFalse();
        }
    }

    @Test
    @DisplayName("losing the lease interrupts the work at once and the process competes again")
    void lossStopsTheWork() throws Exception {
        TestBackend backend = new TestBackend();
        try (LockProvider locks = new BackendLockProvider<>(backend, LockRuntime.defaults())) {
            CompletableFuture<Long> interruptedAt = new CompletableFuture<>();
            CountDownLatch firstTerm = new CountDownLatch(1);
            Leadership leadership = Leadership.builder(locks, "job")
                    .leaseTime(Duration.ofMillis(500))
                    .retryDelay(Duration.ZERO)
                    .start(ctx -> {
                        firstTerm.countDown();
                        try {
                            Thread.sleep(60_000);
                        } catch (InterruptedException e) {
                            interruptedAt.complete(System.nanoTime());
                            throw e;
                        }
                    });
            assertThat(firstTerm.await(5, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<LossReason> session = backend.sessionLoss;
            backend.sessionLoss = new CompletableFuture<>();
            long lostAt = System.nanoTime();
            session.complete(LossReason.SESSION_EXPIRED);
            long reaction = interruptedAt.get(5, TimeUnit.SECONDS) - lostAt;
            assertThat(Duration.ofNanos(reaction))
                    .as("time from loss to interrupt")
                    .isLessThan(Duration.ofSeconds(1));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (leadership.terms() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(leadership.terms()).as("competed again and won").isEqualTo(2);
            leadership.close();
        }
    }

    @Test
    @DisplayName("a follower with acquireWait(0) asks the backend at most once per retryDelay")
    void zeroWaitFollowerDoesNotSpin() throws Exception {
        TestBackend backend = new TestBackend();
        try (LockProvider holder = new BackendLockProvider<>(backend, LockRuntime.defaults());
                LockProvider follower = new BackendLockProvider<>(backend, LockRuntime.defaults())) {
            holder.acquire("leader", LeaseOptions.of(Duration.ofSeconds(30)));
            int before = backend.tryLockCalls();
            Duration retryDelay = Duration.ofMillis(100);
            long start = System.nanoTime();
            Leadership leadership = Leadership.builder(follower, "leader")
                    .acquireWait(Duration.ZERO)
                    .retryDelay(retryDelay)
                    .start(ctx -> {});
            Thread.sleep(1_000);
            leadership.close();
            long elapsed = System.nanoTime() - start;
            int calls = backend.tryLockCalls() - before;
            assertThat(leadership.terms()).isZero();
            assertThat(calls)
                    .as("tryLock calls in %d ms", elapsed / 1_000_000)
                    .isPositive()
                    .isLessThanOrEqualTo((int) (elapsed / retryDelay.toNanos()) + 1);
        }
    }

    @Test
    @DisplayName("the leader thread survives any exception from tryAcquire, retries after retryDelay, then leads")
    void survivesUnexpectedExceptions() throws Exception {
        AtomicInteger failuresLeft = new AtomicInteger(3);
        try (LockProvider backend = Locks.open("memory-test://leader");
                LockProvider flaky = new ForwardingLockProvider(backend) {
                    @Override
                    public Optional<Lease> tryAcquire(String name, LeaseOptions options) {
                        if (failuresLeft.getAndDecrement() > 0) {
                            throw new IllegalArgumentException("leaseTime is too short for this backend");
                        }
                        return super.tryAcquire(name, options);
                    }
                }) {
            CountDownLatch leads = new CountDownLatch(1);
            Leadership leadership = Leadership.builder(flaky, "job")
                    .retryDelay(Duration.ofMillis(10))
                    .start(ctx -> {
                        leads.countDown();
                        while (ctx.isLeader()) {
                            Thread.sleep(5);
                        }
                    });
            assertThat(leads.await(5, TimeUnit.SECONDS))
                    .as("leads after three failures")
                    .isTrue();
            assertThat(leadership.terms()).isEqualTo(1);
            leadership.close();
        }
    }

    @Test
    @DisplayName("settings that do not fit are rejected when the leadership is built, naming the field")
    void badSettingsAreRejected() throws Exception {
        try (LockProvider locks = Locks.open("memory-test://leader")) {
            assertThatThrownBy(() -> Leadership.builder(locks, "x")
                            .acquireWait(Duration.ZERO)
                            .retryDelay(Duration.ZERO)
                            .start(ctx -> {}))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("retryDelay")
                    .hasMessageContaining("acquireWait");
            assertThatThrownBy(() -> Leadership.builder(locks, "x").acquireWait(Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("acquireWait")
                    .hasMessageContaining("PT-0.001S");
            assertThatThrownBy(() -> Leadership.builder(locks, "x").retryDelay(null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("retryDelay");
            assertThatThrownBy(() -> Leadership.builder(locks, "x").leaseTime(Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("leaseTime");
        }
    }
}
