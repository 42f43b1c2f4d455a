package io.lockstep;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.TestBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
}
