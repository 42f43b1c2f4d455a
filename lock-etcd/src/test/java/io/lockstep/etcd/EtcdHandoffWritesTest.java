package io.lockstep.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.GetOption;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a handoff writes through etcd's consensus, counted by the server itself ({@code
 * etcd_server_proposals_committed_total}, on an etcd of this class's own so nothing else writes): the
 * waiter's queue entry and the holder's release, nothing for the waiter's looks. etcd sends every
 * transaction with a put in either branch through consensus, so a waiter that looked by sending its
 * acquire transaction again cost a third, fsynced, log entry per handoff.
 */
@DisplayName("lock-etcd: a handoff writes the queue entry and the release, and the waiter's looks write nothing")
class EtcdHandoffWritesTest {

    private static final LeaseOptions LONG = LeaseOptions.of(Duration.ofSeconds(30));

    @RegisterExtension
    static final SoloEtcd ETCD = new SoloEtcd();

    @Test
    @DisplayName("each of 5 handoffs to a queued waiter commits exactly 2 proposals")
    void twoWritesPerHandoff() throws Exception {
        try (LockProvider holder = Locks.open(ETCD.server().uri() + "?timeout=5s");
                LockProvider waiter = Locks.open(ETCD.server().uri() + "?timeout=5s")) {
            // Sessions first: granting a session lease is a write of its own.
            holder.acquire("warm-up", LONG).release();
            waiter.acquire("warm-up", LONG).release();
            Lease held = holder.acquire("job", LONG);
            for (int handoff = 0; handoff < 5; handoff++) {
                LockProvider next = handoff % 2 == 0 ? waiter : holder;
                long before = committed();
                CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(
                        () -> next.acquire("job", LONG.withWaitTime(Duration.ofSeconds(30))));
                awaitQueued(2);
                held.release();
                held = waiting.get(30, TimeUnit.SECONDS);
                assertThat(committed() - before)
                        .as("handoff %d: the waiter's put and the holder's delete, and no write for any look", handoff)
                        .isEqualTo(2);
            }
            held.release();
        }
    }

    private static void awaitQueued(int keys) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (ETCD.admin()
                        .getKVClient()
                        .get(
                                ByteSequence.from("lockstep/#job/", StandardCharsets.UTF_8),
                                GetOption.builder()
                                        .isPrefix(true)
                                        .withCountOnly(true)
                                        .build())
                        .get(10, TimeUnit.SECONDS)
                        .getCount()
                != keys) {
            assertThat(System.nanoTime() - deadline)
                    .as("the waiter queued within 30 s")
                    .isNegative();
            Thread.sleep(10);
        }
    }

    private static long committed() throws Exception {
        return EtcdMetrics.sum(ETCD.server(), "etcd_server_proposals_committed_total", "");
    }
}
