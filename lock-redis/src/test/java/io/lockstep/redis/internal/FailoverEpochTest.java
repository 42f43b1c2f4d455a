package io.lockstep.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.LossReason;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A Sentinel primary's epoch keeps nothing for a grant that is gone (a shared future kept a listener
 * per lease ever granted until the next failover), and still ends every grant that lives.
 */
@DisplayName("FailoverEpoch: one signal per grant, dropped with the grant, completed at the failover")
class FailoverEpochTest {

    @Test
    @DisplayName("100,000 signals whose grants are gone are dropped; the kept ones are all completed at the end")
    void signalsOfEndedGrantsAreDroppedAndLiveOnesEnd() throws InterruptedException {
        FailoverEpoch epoch = new FailoverEpoch();
        AtomicInteger heard = new AtomicInteger();
        List<CompletableFuture<LossReason>> kept = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            CompletableFuture<LossReason> signal = epoch.signal();
            signal.thenAccept(reason -> heard.incrementAndGet()); // as a lease listens
            if (i % 10_000 == 0) {
                kept.add(signal); // a lease still held
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (epoch.signalsHeld() > kept.size() && System.nanoTime() - deadline < 0) {
            System.gc();
            Thread.sleep(20);
        }
        assertThat(epoch.signalsHeld())
                .as("signals held once the grants that were not kept are collected")
                .isEqualTo(kept.size());
        epoch.end();
        epoch.end();
        assertThat(kept).allSatisfy(signal -> assertThat(signal).isCompletedWithValue(LossReason.NOT_HELD));
        assertThat(heard.get()).as("listeners that heard the failover").isEqualTo(kept.size());
        assertThat(epoch.signalsHeld()).isZero();
    }

    @Test
    @DisplayName("a signal taken after the epoch ended is completed at once")
    void aSignalTakenAfterTheEndIsAlreadyComplete() {
        FailoverEpoch epoch = new FailoverEpoch();
        epoch.end();
        assertThat(epoch.signal()).isCompletedWithValue(LossReason.NOT_HELD);
    }
}
