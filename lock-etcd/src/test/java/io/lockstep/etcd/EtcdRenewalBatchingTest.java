package io.lockstep.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.tck.CountingMetrics;
import io.lockstep.tck.Timing;
import io.lockstep.tck.servers.EtcdServer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, item 2: lock-etcd renews many grants with one read-only transaction (the session's
 * keep-alive keeps their keys), counted at a real etcd from its own gRPC counters; a batch still
 * reports exactly which grant was lost.
 */
@DisplayName("lock-etcd: batched renewal")
class EtcdRenewalBatchingTest {

    private static final int LEASES = 200;
    private final Timing timing = Timing.fromSystemProperty();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (Exception ignored) {
                // keep closing the rest
            }
        }
    }

    @Test
    @DisplayName("200 auto-renewed leases are renewed with at least 10 renewals per transaction etcd receives")
    void manyLeasesRenewInFewTransactions() throws Exception {
        EtcdServer etcd = EtcdServer.start();
        toClose.add(etcd);
        CountingMetrics counts = new CountingMetrics();
        LockProvider provider = Locks.open(LockConfig.of(etcd.uri())
                .withRuntime(LockRuntime.builder().metrics(counts).build()));
        toClose.add(provider);
        LeaseOptions options = LeaseOptions.of(timing.millis(3_000)).withAutoRenew();
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < LEASES; i++) {
            leases.add(provider.tryAcquire("renewed-" + i, options).orElseThrow());
        }

        long txnsBefore = txnsReceived(etcd);
        long renewedBefore = counts.renewals();
        // Every lease renews at a third of its lease time: wait for two rounds of all of them.
        long deadline = System.nanoTime() + timing.millis(20_000).toNanos();
        while (counts.renewals() - renewedBefore < 2L * LEASES && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
        }
        long renewals = counts.renewals() - renewedBefore;
        long txns = txnsReceived(etcd) - txnsBefore;

        System.out.printf("%d leases: %d renewals in %d transactions received by etcd%n", LEASES, renewals, txns);
        assertThat(renewals).as("renewals within the deadline").isGreaterThanOrEqualTo(2L * LEASES);
        assertThat(txns).as("transactions at etcd for %d renewals", renewals).isPositive();
        assertThat(txns * 10).as("transactions × 10 (%d renewals)", renewals).isLessThanOrEqualTo(renewals);
        assertThat(counts.losses()).as("leases lost").isZero();
        assertThat(counts.renewalFailures()).as("renewals failed").isZero();
        assertThat(leases).allMatch(Lease::isValid, "valid");
        for (Lease lease : leases) {
            assertThat(lease.release()).isTrue();
        }
    }

    @Test
    @DisplayName("a batched renewal loses exactly the lease whose key was deleted, with NOT_HELD; the others stay held")
    void aBatchLosesOnlyTheLeaseWhoseKeyWasDeleted() throws Exception {
        EtcdServer etcd = EtcdServer.start();
        toClose.add(etcd);
        LockProvider provider = Locks.open(etcd.uri());
        toClose.add(provider);
        Client raw = Client.builder().endpoints(etcd.endpoint()).build();
        toClose.add(raw);
        LeaseOptions options = LeaseOptions.of(timing.millis(3_000)).withAutoRenew();
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            leases.add(provider.tryAcquire("batch-" + i, options).orElseThrow());
        }
        // Someone deletes lease 17's queue key behind the holder's back (an operator, a wrong cleanup).
        ByteSequence queue = ByteSequence.from("lockstep/#batch-17/", StandardCharsets.UTF_8);
        List<KeyValue> keys = raw.getKVClient()
                .get(queue, GetOption.builder().isPrefix(true).build())
                .get(10, TimeUnit.SECONDS)
                .getKvs();
        assertThat(keys).as("lease 17's queue under %s", queue).hasSize(1);
        raw.getKVClient().delete(keys.get(0).getKey()).get(10, TimeUnit.SECONDS);

        Lease taken = leases.get(17);
        assertThat(taken.lost().toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo(LossReason.NOT_HELD);
        // Two more renewal rounds (a round is a third of the lease) for the others.
        long deadline = System.nanoTime() + timing.millis(2_500).toNanos();
        while (System.nanoTime() - deadline < 0) {
            assertThat(leases.stream().filter(l -> l != taken)).allMatch(Lease::isValid, "valid");
            Thread.sleep(50);
        }
        for (Lease lease : leases) {
            if (lease != taken) {
                assertThat(lease.release()).as("release of a lease still held").isTrue();
            }
        }
    }

    /** The Txn requests etcd has received, from its own {@code /metrics}. */
    private static long txnsReceived(EtcdServer etcd) throws Exception {
        return EtcdMetrics.sum(etcd, "grpc_server_msg_received_total", "grpc_method=\"Txn\"");
    }
}
