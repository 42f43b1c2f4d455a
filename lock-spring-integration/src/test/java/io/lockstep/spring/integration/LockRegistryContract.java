package io.lockstep.spring.integration;

import static io.lockstep.spring.integration.Waits.TIMING;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Lease;
import io.lockstep.LockProvider;
import io.lockstep.tck.faults.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * The behaviours Spring Integration's own {@code RedisLockRegistryTests} and {@code JdbcLockRegistryTests}
 * check, run against {@link LockstepLockRegistry} on one backend, plus what Lockstep adds (fencing, loss).
 * Where Lockstep deliberately differs (a lost lock is never silently taken again), the test says so.
 *
 * <p>Each test gets two registries on two clients of the backend: {@code registry}, and {@code other}, which
 * stands for another process.
 */
abstract class LockRegistryContract {

    /** Short enough for ZooKeeper's 8 s test sessions; renewed, so holds may outlast it. */
    static final Duration LEASE = Duration.ofSeconds(5);

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private LockProvider provider;
    private LockProvider otherProvider;
    LockstepLockRegistry registry;
    LockstepLockRegistry other;
    String key;

    /** The started server of the test class. */
    protected abstract Backend backend();

    @BeforeEach
    void openRegistries() {
        provider = backend().newProvider();
        otherProvider = backend().newProvider();
        registry = new LockstepLockRegistry(
                provider, LockstepLockRegistryOptions.defaults().withLeaseTime(LEASE));
        other = new LockstepLockRegistry(
                otherProvider, LockstepLockRegistryOptions.defaults().withLeaseTime(LEASE));
        key = "si-" + UUID.randomUUID();
    }

    @AfterEach
    void closeRegistries() {
        threads.shutdownNow();
        provider.close();
        otherProvider.close();
    }

    @Test
    @DisplayName("lock and unlock ten times; obtain returns one instance per key until it expires unused")
    void lockTenTimes() {
        for (int i = 0; i < 10; i++) {
            Lock lock = registry.obtain(key);
            lock.lock();
            try {
                assertThat(registry.obtain(key)).isSameAs(lock);
            } finally {
                lock.unlock();
            }
        }
        LockstepLock before = registry.obtain(key);
        registry.expireUnusedOlderThan(-10_000);
        assertThat(registry.obtain(key)).isNotSameAs(before);
    }

    @Test
    @DisplayName("lockInterruptibly and unlock ten times")
    void lockInterruptiblyTenTimes() throws InterruptedException {
        for (int i = 0; i < 10; i++) {
            Lock lock = registry.obtain(key);
            lock.lockInterruptibly();
            lock.unlock();
        }
    }

    @Test
    @DisplayName("reentrant for the owner: one lease for nested holds, released by the last unlock")
    void reentrantForTheOwner() throws Exception {
        LockstepLock lock = registry.obtain(key);
        lock.lock();
        Lease outer = lock.lease().orElseThrow();
        lock.lockInterruptibly();
        assertThat(lock.tryLock()).isTrue();
        assertThat(lock.lease()).containsSame(outer);
        lock.unlock();
        lock.unlock();
        assertThat(otherTakes(Duration.ZERO))
                .as("still held after two of three unlocks")
                .isFalse();
        lock.unlock();
        assertThat(otherTakes(TIMING.millis(10_000))).isTrue();
    }

    @Test
    @DisplayName("two keys are two locks")
    void twoKeysAreTwoLocks() throws InterruptedException {
        Lock foo = registry.obtain(key);
        foo.lockInterruptibly();
        Lock bar = registry.obtain(key + "-bar");
        assertThat(bar).isNotSameAs(foo);
        assertThat(bar.tryLock()).isTrue();
        bar.unlock();
        foo.unlock();
    }

    @Test
    @DisplayName("a second thread's tryLock(time) waits at most its time, and its unlock throws 'does not own'")
    void secondThreadFailsToGetLock() throws Exception {
        Lock lock = registry.obtain(key);
        lock.lockInterruptibly();
        Future<Object> result = threads.submit(() -> {
            Lock same = registry.obtain(key);
            boolean locked = same.tryLock(200, MILLISECONDS);
            try {
                same.unlock();
                return locked;
            } catch (Exception e) {
                return locked ? "locked" : e;
            }
        });
        Object outcome = result.get(TIMING.millis(10_000).toMillis(), MILLISECONDS);
        lock.unlock();
        assertThat(outcome).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(((Exception) outcome).getMessage()).contains("own");
    }

    @Test
    @DisplayName("a second thread waits in lockInterruptibly until the first unlocks")
    void secondThreadWaitsForTheFirst() throws Exception {
        assertSecondWaitsForFirst(registry, registry);
    }

    @Test
    @DisplayName("two registries (two processes) exclude each other on one key")
    void twoRegistriesExcludeEachOther() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertSecondWaitsForFirst(registry, other);
        }
    }

    private void assertSecondWaitsForFirst(LockstepLockRegistry first, LockstepLockRegistry second) throws Exception {
        Lock lock = first.obtain(key);
        lock.lockInterruptibly();
        AtomicBoolean locked = new AtomicBoolean();
        CountDownLatch waiting = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        threads.execute(() -> {
            Lock same = second.obtain(key);
            try {
                waiting.countDown();
                same.lockInterruptibly();
                locked.set(true);
                same.unlock();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                done.countDown();
            }
        });
        assertThat(waiting.await(10, SECONDS)).isTrue();
        assertThat(locked).as("the second got the lock while the first held it").isFalse();
        lock.unlock();
        assertThat(done.await(TIMING.millis(20_000).toMillis(), MILLISECONDS)).isTrue();
        assertThat(locked).isTrue();
    }

    @Test
    @DisplayName("unlock by a thread that does not own the lock throws and leaves it held")
    void wrongThreadUnlocks() throws Exception {
        Lock lock = registry.obtain(key);
        lock.lockInterruptibly();
        Future<Exception> result = threads.submit(() -> {
            try {
                lock.unlock();
                return null;
            } catch (Exception e) {
                return e;
            }
        });
        Exception thrown = result.get(10, SECONDS);
        assertThat(thrown).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(thrown.getMessage()).contains("own");
        assertThat(otherTakes(Duration.ZERO))
                .as("another process took it after a wrong unlock")
                .isFalse();
        lock.unlock();
    }

    @Test
    @DisplayName("tryLock(time) on a lock another process holds returns false once its time is up")
    void tryLockIsBounded() throws Exception {
        Lock lock = registry.obtain(key);
        lock.lock();
        try {
            Future<Boolean> attempt = threads.submit(() -> other.obtain(key).tryLock(300, MILLISECONDS));
            assertThat(attempt.get(TIMING.millis(10_000).toMillis(), MILLISECONDS))
                    .isFalse();
        } finally {
            lock.unlock();
        }
    }

    @Test
    @DisplayName("unlock after the lease was lost throws ConcurrentModificationException with Spring's message")
    void unlockAfterLossThrows() throws InterruptedException {
        LockstepLockRegistry noRenewal = new LockstepLockRegistry(
                provider,
                LockstepLockRegistryOptions.defaults().withLeaseTime(LEASE).withAutoRenew(false));
        LockstepLock lock = noRenewal.obtain(key);
        assertThat(lock.tryLock(Duration.ZERO, Duration.ofMillis(500))).isTrue();
        Lease lease = lock.lease().orElseThrow();
        Waits.until("the 500 ms lease to end", Duration.ofSeconds(10), () -> !lease.isValid());
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("Lock was released in the store due to expiration.")
                .hasMessageContaining(key);
        assertThat(lock.lease()).isEmpty();
        assertThat(otherTakes(TIMING.millis(10_000))).isTrue();
    }

    @Test
    @DisplayName("renewed automatically, a hold outlasts its lease time")
    void renewalKeepsTheLock() throws InterruptedException {
        LockstepLockRegistry renewing = new LockstepLockRegistry(
                provider, LockstepLockRegistryOptions.defaults().withLeaseTime(Duration.ofSeconds(1)));
        Lock lock = renewing.obtain(key);
        assertThat(lock.tryLock()).isTrue();
        Thread.sleep(TIMING.millis(2_500).toMillis());
        assertThat(otherTakes(Duration.ZERO)).isFalse();
        lock.unlock();
    }

    @Test
    @DisplayName("renewLock extends the owner's lease; by a thread that does not own it, it throws")
    void renewLock() throws InterruptedException {
        LockstepLockRegistry noRenewal = new LockstepLockRegistry(
                provider,
                LockstepLockRegistryOptions.defaults().withLeaseTime(LEASE).withAutoRenew(false));
        LockstepLock lock = noRenewal.obtain(key);
        assertThat(lock.tryLock(Duration.ZERO, Duration.ofMillis(800))).isTrue();
        noRenewal.renewLock(key, Duration.ofSeconds(4));
        assertThat(lock.lease().orElseThrow().remaining()).isGreaterThan(Duration.ofSeconds(1));
        Thread.sleep(TIMING.millis(1_200).toMillis());
        assertThat(otherTakes(Duration.ZERO))
                .as("taken after the renewed lease's first term")
                .isFalse();
        noRenewal.renewLock(key);
        lock.unlock();
        assertThatThrownBy(() -> noRenewal.renewLock(key)).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    @DisplayName("lock(ttl) and tryLock(wait, ttl) take a lease of their own time to live")
    void customTimeToLive() throws InterruptedException {
        LockstepLock lock = registry.obtain(key);
        lock.lock(Duration.ofSeconds(3));
        assertThat(lock.lease().orElseThrow().remaining()).isLessThanOrEqualTo(Duration.ofSeconds(3));
        lock.unlock();
        assertThat(lock.tryLock(Duration.ofSeconds(1), Duration.ofSeconds(4))).isTrue();
        assertThat(lock.lease().orElseThrow().remaining())
                .isGreaterThan(Duration.ofSeconds(3))
                .isLessThanOrEqualTo(Duration.ofSeconds(4));
        lock.unlock();
    }

    @Test
    @DisplayName("newCondition is not supported")
    void newConditionIsNotSupported() {
        assertThatThrownBy(() -> registry.obtain(key).newCondition()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    @DisplayName("a key that is not a String, or not a valid lock name, is refused with Lockstep's message")
    void invalidKeysAreRefused() {
        assertThatThrownBy(() -> registry.obtain(42))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockKey must be a String, was java.lang.Integer");
        assertThatThrownBy(() -> registry.obtain("a\tb"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lock name must not contain control characters");
        assertThatThrownBy(() -> registry.obtain("k".repeat(300)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be at most 256 bytes of UTF-8, was 300 bytes");
    }

    @Test
    @DisplayName("keys that differ only in case or their 256th byte are different locks")
    void keysArePassedUnchanged() {
        String longKey = "k".repeat(255);
        Lock upper = registry.obtain("Key-" + key);
        Lock lower = registry.obtain("key-" + key);
        Lock longA = registry.obtain(longKey + "a");
        Lock longB = registry.obtain(longKey + "b");
        for (Lock lock : new Lock[] {upper, lower, longA, longB}) {
            assertThat(lock.tryLock()).isTrue();
        }
        for (Lock lock : new Lock[] {upper, lower, longA, longB}) {
            lock.unlock();
        }
    }

    @Test
    @DisplayName("the holder reads its lease and a fencing token that grows from hold to hold; others see none")
    void holderReadsItsFencingToken() throws Exception {
        LockstepLock lock = registry.obtain(key);
        lock.lock();
        long first = lock.fencingToken().orElseThrow();
        Future<Boolean> seenElsewhere = threads.submit(() -> lock.lease().isPresent());
        assertThat(seenElsewhere.get(10, SECONDS)).isFalse();
        lock.unlock();
        assertThat(lock.lease()).isEmpty();
        lock.lock();
        assertThat(lock.fencingToken().orElseThrow()).isGreaterThan(first);
        lock.unlock();
    }

    @Test
    @DisplayName("after a loss, the owner's reentrant tryLock is false and ends the hold; its unlock throws")
    void reentrantTryLockAfterLoss() throws InterruptedException {
        LockstepLockRegistry noRenewal = new LockstepLockRegistry(
                provider,
                LockstepLockRegistryOptions.defaults().withLeaseTime(LEASE).withAutoRenew(false));
        LockstepLock lock = noRenewal.obtain(key);
        assertThat(lock.tryLock(Duration.ZERO, Duration.ofMillis(500))).isTrue();
        Lease lease = lock.lease().orElseThrow();
        Waits.until("the 500 ms lease to end", Duration.ofSeconds(10), () -> !lease.isValid());
        assertThat(lock.tryLock())
                .as("Lockstep never takes a lost lock again silently")
                .isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
        assertThat(lock.tryLock(TIMING.millis(10_000).toMillis(), MILLISECONDS)).isTrue();
        assertThat(lock.lease().orElseThrow().fencingToken().orElseThrow())
                .isGreaterThan(lease.fencingToken().orElseThrow());
        lock.unlock();
    }

    @Test
    @DisplayName("lockInterruptibly waiting for another process stops when interrupted, holding nothing")
    void lockInterruptiblyStopsWhenInterrupted() throws Exception {
        LockstepLock held = other.obtain(key);
        held.lock();
        CountDownLatch started = new CountDownLatch(1);
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            LockstepLock lock = registry.obtain(key);
            started.countDown();
            try {
                lock.lockInterruptibly();
                outcome.set("locked");
                lock.unlock();
            } catch (InterruptedException e) {
                outcome.set(lock.lease().isPresent() ? "interrupted, still holding" : e);
            }
        });
        waiter.start();
        try {
            assertThat(started.await(10, SECONDS)).isTrue();
            Thread.sleep(200); // let it reach the backend's wait; the outcome must be the same either way
            waiter.interrupt();
            waiter.join(TIMING.millis(10_000).toMillis());
            assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        } finally {
            held.unlock();
        }
        LockstepLock lock = registry.obtain(key);
        assertThat(lock.tryLock(TIMING.millis(10_000).toMillis(), MILLISECONDS))
                .as("the interrupted waiter left nothing held")
                .isTrue();
        lock.unlock();
    }

    @Test
    @DisplayName("lock() ignores interrupts: it gets the lock once it is freed, and keeps the interrupt status")
    void lockIgnoresInterrupts() throws Exception {
        LockstepLock held = other.obtain(key);
        held.lock();
        CountDownLatch started = new CountDownLatch(1);
        AtomicReference<Boolean> interruptedAfterLock = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            LockstepLock lock = registry.obtain(key);
            started.countDown();
            lock.lock();
            interruptedAfterLock.set(Thread.interrupted());
            lock.unlock();
        });
        waiter.start();
        try {
            assertThat(started.await(10, SECONDS)).isTrue();
            waiter.interrupt();
            Thread.sleep(200);
            assertThat(waiter.isAlive())
                    .as("lock() returned while another process held the lock")
                    .isTrue();
        } finally {
            held.unlock();
        }
        waiter.join(TIMING.millis(20_000).toMillis());
        assertThat(interruptedAfterLock.get())
                .as("the interrupt status after lock()")
                .isTrue();
    }

    @Test
    @DisplayName("closing the provider ends every hold: the holder's unlock throws")
    void closingTheProviderEndsTheHold() {
        LockProvider own = backend().newProvider();
        LockstepLock lock = new LockstepLockRegistry(
                        own, LockstepLockRegistryOptions.defaults().withLeaseTime(LEASE))
                .obtain(key);
        lock.lock();
        own.close();
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    }

    @Test
    @DisplayName("executeLocked runs the task under the lock")
    void executeLocked() throws Exception {
        String result = registry.executeLocked(key, Duration.ofSeconds(5), () -> {
            assertThat(otherTakes(Duration.ZERO)).isFalse();
            return "done";
        });
        assertThat(result).isEqualTo("done");
        assertThat(otherTakes(TIMING.millis(10_000))).isTrue();
    }

    @Test
    @DisplayName(
            "LockRegistryLeaderInitiator: three clients elect one leader; cut off, it is revoked and another leads")
    void leaderInitiatorElectsOneLeaderAndMovesOn() throws Exception {
        Election election = new Election();
        String role = "leader-" + key;
        List<TcpProxy> proxies = new ArrayList<>();
        List<LockProvider> clients = new ArrayList<>();
        List<LockRegistryLeaderInitiator> initiators = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                TcpProxy proxy = backend().newProxy();
                LockProvider client = backend().newProvider(proxy);
                proxies.add(proxy);
                clients.add(client);
                // 6 s, not 2: the check below holds only while renewals land within the lease (see
                // LeaderInitiatorThreeJvmTest); a loaded machine can hold a renewal back for over a second.
                LockstepLockRegistry participant = new LockstepLockRegistry(
                        client, LockstepLockRegistryOptions.defaults().withLeaseTime(Duration.ofSeconds(6)));
                LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(
                        participant, new RecordingCandidate("p" + i, role, participant, election::accept));
                initiators.add(initiator);
                initiator.start();
            }
            String first = election.awaitLeader(Set.of(), Duration.ofSeconds(30));
            Thread.sleep(TIMING.millis(1_500).toMillis()); // several heartbeats
            assertThat(election.leaders()).as("leaders after some heartbeats").containsExactly(first);

            int index = Integer.parseInt(first.substring(1));
            election.cutOff(first);
            proxies.get(index).drop();
            String second = election.awaitLeader(Set.of(first), Duration.ofSeconds(40));
            election.awaitRevoked(first, Duration.ofSeconds(40));

            assertThat(second).isNotEqualTo(first);
            assertThat(election.violations())
                    .as("grants while another led:\n%s", election)
                    .isEmpty();
            assertThat(election.fences()).as("fences in grant order").isSorted().doesNotHaveDuplicates();
            proxies.get(index).heal();
        } finally {
            initiators.forEach(LockRegistryLeaderInitiator::destroy);
            clients.forEach(LockProvider::close);
        }
    }

    /** Whether the other registry (another process) can take the key within {@code wait}; gives it back. */
    boolean otherTakes(Duration wait) throws InterruptedException {
        Future<Boolean> attempt = threads.submit(() -> {
            LockstepLock lock = other.obtain(key);
            boolean taken = lock.tryLock(wait.toMillis(), MILLISECONDS);
            if (taken) {
                lock.unlock();
            }
            return taken;
        });
        try {
            return attempt.get(wait.toMillis() + TIMING.millis(10_000).toMillis(), MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new AssertionError(e);
        }
    }
}
