package io.lockstep.spi;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockRuntime;
import io.lockstep.LossReason;
import io.lockstep.metrics.LockMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Issue 12: renewals due together go to the backend as one batch, and loss stays per lease. */
@DisplayName("Renewal batching")
class RenewalBatchingTest {

    private static final int LEASES = 20;

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final TestBackend backend = new TestBackend();
    private final AtomicInteger renewed = new AtomicInteger();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    private BackendLockProvider<String> provider() {
        LockRuntime runtime = LockRuntime.builder()
                .renewalBatchWindow(Duration.ofMillis(200))
                .metrics(new LockMetrics() {
                    @Override
                    public void renewed(String provider) {
                        renewed.incrementAndGet();
                    }
                })
                .build();
        BackendLockProvider<String> provider = new BackendLockProvider<>(backend, runtime);
        toClose.add(provider);
        return provider;
    }

    private List<Lease> acquireAll(BackendLockProvider<String> provider) {
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < LEASES; i++) {
            leases.add(provider.tryAcquire(
                            "b" + i, LeaseOptions.of(Duration.ofMillis(3_000)).withAutoRenew())
                    .orElseThrow());
        }
        return leases;
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waiting for: " + what).isNegative();
            Thread.sleep(5);
        }
    }

    @Test
    @DisplayName("renewals due within the window are sent in batches of at most maxRenewalBatch, not one by one")
    void dueRenewalsGoAsBatches() throws Exception {
        backend.renewalBatch = 8;
        List<Lease> leases = acquireAll(provider());
        await("two rounds of renewals", () -> renewed.get() >= 2 * LEASES);
        assertThat(backend.extendCalls.get()).as("one-by-one extends").isZero();
        assertThat(backend.extendAllSizes).allMatch(size -> size >= 1 && size <= 8, "1..8");
        int extended =
                backend.extendAllSizes.stream().mapToInt(Integer::intValue).sum();
        assertThat(extended).isGreaterThanOrEqualTo(2 * LEASES);
        // 20 leases acquired within one 200 ms window: batches of 8, 8 and 4 per round, not 20 calls.
        assertThat(backend.extendAllSizes.size() * 2).as("batches × 2").isLessThanOrEqualTo(extended);
        assertThat(leases).allMatch(Lease::isValid, "valid");
    }

    @Test
    @DisplayName("a batch reports loss per lease: only the lease whose lock was taken is lost, with NOT_HELD")
    void aBatchReportsLossPerLease() throws Exception {
        backend.renewalBatch = 50;
        List<Lease> leases = acquireAll(provider());
        backend.steal("b7");
        Lease stolen = leases.get(7);
        assertThat(stolen.lost().toCompletableFuture().get(10, TimeUnit.SECONDS))
                .isEqualTo(LossReason.NOT_HELD);
        await("a second round of renewals", () -> renewed.get() >= 2 * (LEASES - 1));
        assertThat(backend.extendAllSizes).as("batches").isNotEmpty();
        for (Lease lease : leases) {
            if (lease != stolen) {
                assertThat(lease.lost().toCompletableFuture()).as(lease.name()).isNotDone();
                assertThat(lease.isValid()).as(lease.name()).isTrue();
            }
        }
        assertThat(backend.isHeldBy("b7", "thief"))
                .as("the new holder keeps the lock")
                .isTrue();
    }

    @Test
    @DisplayName("a backend that does not batch (maxRenewalBatch 1, the default) is renewed one by one through extend")
    void aBackendThatDoesNotBatchIsRenewedOneByOne() throws Exception {
        List<Lease> leases = acquireAll(provider());
        await("a round of renewals", () -> renewed.get() >= LEASES);
        assertThat(backend.extendAllSizes).as("extendAll calls").isEmpty();
        assertThat(backend.extendCalls.get()).isGreaterThanOrEqualTo(LEASES);
        assertThat(leases).allMatch(Lease::isValid, "valid");
    }
}
