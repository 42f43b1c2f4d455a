package io.lockstep.shedlock;

import static io.lockstep.shedlock.Waits.TIMING;
import static java.time.Duration.ZERO;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LossReason;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Keep-alive mode and the settings that cannot work, on Redis (the mode is the adapter's, not the backend's). */
@DisplayName("Keep-alive mode and bad settings, on Redis")
class KeepAliveModeTest {

    private static Backend backend;

    private LockProvider locks;
    private LockProvider probe;
    private String name;

    @BeforeAll
    static void startServer() {
        backend = Backend.redis();
    }

    @AfterAll
    static void stopServer() {
        if (backend != null) {
            backend.close();
        }
    }

    @BeforeEach
    void openClients() {
        locks = backend.newProvider();
        probe = backend.newProvider();
        name = "keep-alive-" + UUID.randomUUID();
    }

    @AfterEach
    void closeClients() {
        locks.close();
        probe.close();
    }

    @Test
    @DisplayName("a 1 s keep-alive lease is renewed while the task runs, past its lease time")
    void keepAliveRenewsTheShortLease() {
        LockstepShedLockProvider shedLock =
                new LockstepShedLockProvider(locks, LockstepShedLockOptions.keepAlive(Duration.ofSeconds(1)));
        SimpleLock lock = shedLock.lock(config(ofSeconds(30), ZERO)).orElseThrow();
        Waits.sleep(TIMING.millis(2_500));
        assertThat(probeTakes())
                .as("taken while the task ran past its lease time")
                .isFalse();
        lock.unlock();
        Waits.until("another client taking the lock after unlock", ofSeconds(10), this::probeTakes);
    }

    @Test
    @DisplayName("in keep-alive mode the lock is released at lockAtMostFor, even if the task still runs")
    void keepAliveEndsAtLockAtMostFor() {
        LockstepShedLockProvider shedLock =
                new LockstepShedLockProvider(locks, LockstepShedLockOptions.keepAlive(Duration.ofMillis(500)));
        shedLock.lock(config(Duration.ofMillis(1_500), ZERO)).orElseThrow();
        Lease lease = LockstepShedLock.currentLease().orElseThrow();
        Waits.until("the lease to end at lockAtMostFor", ofSeconds(15), () -> lease.lost()
                .toCompletableFuture()
                .isDone());
        assertThat(lease.lost().toCompletableFuture().getNow(null))
                .as("released by the cap, not lost")
                .isEqualTo(LossReason.RELEASED);
        Waits.until("another client taking the lock", ofSeconds(10), this::probeTakes);
    }

    @Test
    @DisplayName("in keep-alive mode lockAtLeastFor is kept past the short lease, then the lock is released")
    void keepAliveKeepsLockAtLeastFor() {
        LockstepShedLockProvider shedLock =
                new LockstepShedLockProvider(locks, LockstepShedLockOptions.keepAlive(TIMING.millis(4_000)));
        SimpleLock lock =
                shedLock.lock(config(ofSeconds(30), TIMING.millis(3_000))).orElseThrow();
        lock.unlock();
        assertThat(probeTakes())
                .as("taken right after unlock, within lockAtLeastFor")
                .isFalse();
        Waits.until("another client taking the lock after lockAtLeastFor", ofSeconds(20), this::probeTakes);
    }

    @Test
    @DisplayName("a keep-alive lease shorter than lockAtLeastFor fails fast, naming both values")
    void keepAliveShorterThanLockAtLeastForFailsFast() {
        LockstepShedLockProvider shedLock =
                new LockstepShedLockProvider(locks, LockstepShedLockOptions.keepAlive(Duration.ofSeconds(1)));
        assertThatThrownBy(() -> shedLock.lock(config(ofSeconds(30), ofSeconds(5))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtLeastFor (PT5S)")
                .hasMessageContaining("keep-alive lease (PT1S)")
                .hasMessageContaining(name);
        assertThat(probeTakes()).as("nothing was acquired").isTrue();
    }

    @Test
    @DisplayName("extending in keep-alive mode to a lockAtLeastFor longer than the keep-alive lease fails fast")
    void keepAliveExtensionBeyondTheLeaseFailsFast() {
        LockstepShedLockProvider shedLock =
                new LockstepShedLockProvider(locks, LockstepShedLockOptions.keepAlive(Duration.ofSeconds(1)));
        SimpleLock lock = shedLock.lock(config(ofSeconds(30), ZERO)).orElseThrow();
        assertThatThrownBy(() -> lock.extend(ofSeconds(30), ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtLeastFor (PT5S)")
                .hasMessageContaining("keep-alive lease (PT1S)");
        SimpleLock extended = lock.extend(ofSeconds(30), ofSeconds(1)).orElseThrow();
        extended.unlock();
        Waits.until("another client taking the lock after lockAtLeastFor", ofSeconds(10), this::probeTakes);
    }

    @Test
    @DisplayName("a lockAtMostFor of zero is refused, naming lockAtMostFor and the lock")
    void zeroLockAtMostForIsRefused() {
        LockstepShedLockProvider shedLock = new LockstepShedLockProvider(locks);
        assertThatThrownBy(() -> shedLock.lock(config(ZERO, ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtMostFor of lock '" + name + "' must be at least");
    }

    @Test
    @DisplayName("an invalid keep-alive lease time is refused when the options are built")
    void invalidKeepAliveLeaseIsRefused() {
        assertThatThrownBy(() -> LockstepShedLockOptions.keepAlive(ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
    }

    @Test
    @DisplayName("a lock held elsewhere is skipped at once, not waited for")
    void heldLockIsSkipped() {
        Lease held = probe.tryAcquire(name, LeaseOptions.of(ofSeconds(30))).orElseThrow();
        try {
            Optional<SimpleLock> lock = new LockstepShedLockProvider(locks).lock(config(ofSeconds(30), ZERO));
            assertThat(lock).isEmpty();
        } finally {
            held.release();
        }
    }

    private LockConfiguration config(Duration lockAtMostFor, Duration lockAtLeastFor) {
        return new LockConfiguration(Instant.now(), name, lockAtMostFor, lockAtLeastFor);
    }

    private boolean probeTakes() {
        Optional<Lease> taken = probe.tryAcquire(name, LeaseOptions.of(ofSeconds(5)));
        taken.ifPresent(Lease::release);
        return taken.isPresent();
    }
}
