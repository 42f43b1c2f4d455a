package io.lockstep.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.PutResponse;
import io.etcd.jetcd.options.GetOption;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.Locks;
import io.lockstep.etcd.SoloEtcd;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.AttemptContext;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.Grant;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A provider reuses its queue keys of a lock (issue 27: a new key per acquire made etcd's index of
 * deleted keys, which every acquire's read walks, grow until a compaction), and a reused key never lets
 * an old grant's handle touch the new grant.
 */
@DisplayName("lock-etcd: queue keys are reused, and an old handle never touches the key's next grant")
class EtcdKeyReuseTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    @RegisterExtension
    static final SoloEtcd ETCD = new SoloEtcd();

    private static List<KeyValue> keys(String prefix) throws Exception {
        return ETCD.admin()
                .getKVClient()
                .get(
                        ByteSequence.from(prefix, StandardCharsets.UTF_8),
                        GetOption.builder().isPrefix(true).build())
                .get(5, TimeUnit.SECONDS)
                .getKvs();
    }

    /** A condition that may throw, polled by {@link #awaitTrue}. */
    private interface Condition {
        boolean holds() throws Exception;
    }

    /** Polls {@code condition} until it holds; fails after 20 s (an event is awaited, not a time). */
    private static void awaitTrue(String what, Condition condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.holds()) {
            assertThat(System.nanoTime() - deadline).as(what + " within 20 s").isNegative();
            Thread.sleep(10);
        }
    }

    private static String onlyKey(String prefix) throws Exception {
        List<KeyValue> kvs = keys(prefix);
        assertThat(kvs).as("keys under %s", prefix).hasSize(1);
        return kvs.get(0).getKey().toString(StandardCharsets.UTF_8);
    }

    @Test
    @DisplayName("twenty acquires of one lock by one provider use one key; a second provider has its own")
    void oneKeyPerHolderAtATime() throws Exception {
        try (LockProvider locks = Locks.open(ETCD.server().uri() + "?timeout=5s&keyPrefix=reuse1/");
                LockProvider other = Locks.open(ETCD.server().uri() + "?timeout=5s&keyPrefix=reuse1/")) {
            Set<String> seen = new LinkedHashSet<>();
            for (int i = 0; i < 20; i++) {
                Lease lease = locks.acquire("job", LeaseOptions.of(LEASE));
                seen.add(onlyKey("reuse1/#job/"));
                lease.release();
                assertThat(keys("reuse1/#job/")).as("released").isEmpty();
            }
            assertThat(seen).hasSize(1);
            Lease theirs = other.acquire("job", LeaseOptions.of(LEASE));
            assertThat(onlyKey("reuse1/#job/")).as("another provider's key").isNotIn(seen);
            theirs.release();
        }
    }

    @Test
    @DisplayName("a holder and a waiter in one provider take two keys, and the next acquire reuses the first")
    void aWaiterTakesTheNextSlot() throws Exception {
        try (LockProvider locks = Locks.open(ETCD.server().uri() + "?timeout=5s&keyPrefix=reuse2/")) {
            Lease holder = locks.acquire("job", LeaseOptions.of(LEASE));
            String first = onlyKey("reuse2/#job/");
            CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
                    () -> locks.acquire("job", LeaseOptions.of(LEASE).withWaitTime(Duration.ofSeconds(30))));
            awaitTrue("the waiter queued", () -> keys("reuse2/#job/").size() == 2);
            assertThat(waiter)
                    .as("the waiter cannot be granted while the lock is held")
                    .isNotDone();
            holder.release();
            Lease next = waiter.get(20, TimeUnit.SECONDS);
            String second = onlyKey("reuse2/#job/");
            assertThat(second).isNotEqualTo(first);
            next.release();
            Lease again = locks.acquire("job", LeaseOptions.of(LEASE));
            assertThat(onlyKey("reuse2/#job/")).as("the lowest free slot").isEqualTo(first);
            again.release();
        }
    }

    @Test
    @DisplayName("releasing or extending a released grant's handle leaves the next grant on the same key alone")
    void anOldHandleNeverTouchesTheNextGrant() throws Exception {
        try (Client client =
                        Client.builder().endpoints(ETCD.server().endpoint()).build();
                EtcdBackend backend = new EtcdBackend(
                        client,
                        false,
                        "reuse3/",
                        ETCD.server().endpoint(),
                        Duration.ofSeconds(5),
                        LockRuntime.defaults(),
                        ClockDrift.DEFAULT_FACTOR)) {
            Grant<EtcdBackend.Handle> first = granted(backend.tryLock(new AttemptContext("job", "token-a", LEASE)));
            assertThat(backend.release(first.handle())).isTrue();
            backend.dispose(first.handle());
            Grant<EtcdBackend.Handle> second = granted(backend.tryLock(new AttemptContext("job", "token-b", LEASE)));
            assertThat(second.handle().key())
                    .as("the slot is reused")
                    .isEqualTo(first.handle().key());

            assertThat(backend.release(first.handle())).isFalse();
            assertThat(backend.extend(first.handle(), LEASE)).isEmpty();
            assertThat(backend.extendAll(List.of(new io.lockstep.spi.Extension<>(first.handle(), LEASE))))
                    .containsExactly(java.util.Optional.empty());

            assertThat(backend.extend(second.handle(), LEASE))
                    .as("the second grant is still held and tracked")
                    .isPresent();
            assertThat(second.backendLoss().toCompletableFuture()).isNotDone();
            List<KeyValue> kvs = keys("reuse3/#job/");
            assertThat(kvs).hasSize(1);
            assertThat(kvs.get(0).getCreateRevision()).isEqualTo(second.handle().revision());
            assertThat(backend.release(second.handle())).isTrue();
            backend.dispose(second.handle());
            assertThat(keys("reuse3/#job/")).isEmpty();
        }
    }

    private static Grant<EtcdBackend.Handle> granted(Attempt<EtcdBackend.Handle> attempt) {
        assertThat(attempt.isGranted()).as("granted").isTrue();
        return attempt.grant();
    }

    @Test
    @DisplayName("a waiter whose predecessor's key was deleted and put again before its watch began is woken")
    void aPredecessorPutAgainWakesTheWaiter() throws Exception {
        ByteSequence key = ByteSequence.from("reuse4/#job/p.0", StandardCharsets.UTF_8);
        PutResponse first = ETCD.admin().getKVClient().put(key, key).get(5, TimeUnit.SECONDS);
        long created = first.getHeader().getRevision();
        ETCD.admin().getKVClient().delete(key).get(5, TimeUnit.SECONDS);
        ETCD.admin().getKVClient().put(key, key).get(5, TimeUnit.SECONDS); // the slot's next attempt, behind the waiter
        EtcdWaiter waiter = new EtcdWaiter(ETCD.admin(), ETCD.server().endpoint(), w -> {});
        try {
            waiter.watch(key, created, created);
            assertThat(waiter.await(Duration.ofSeconds(20)))
                    .as("woken: the key it waits for is gone, whatever holds its name now")
                    .isTrue();
        } finally {
            waiter.close();
            ETCD.admin().getKVClient().delete(key).get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    @DisplayName("the janitor keeps the leftovers of two attempts that used the same key, and deletes both")
    void theJanitorKeepsEveryAttemptsLeftover() throws Exception {
        ByteSequence key = ByteSequence.from("reuse5/#job/p.0", StandardCharsets.UTF_8);
        List<EtcdJanitor.Leftover> removed = new CopyOnWriteArrayList<>();
        try (EtcdJanitor janitor =
                new EtcdJanitor(ETCD.admin(), Duration.ofSeconds(5), LockRuntime.defaults(), leftover -> {
                    removed.add(leftover);
                    return CompletableFuture.completedFuture(null);
                })) {
            janitor.removeKey(new EtcdJanitor.Leftover("job", "token-a", key, 0, key, 0));
            janitor.removeKey(new EtcdJanitor.Leftover("job", "token-b", key, 17, null, 0));
            assertThat(janitor.pendingKeys()).isEqualTo(2);
            awaitTrue("the janitor removed both", () -> janitor.pendingKeys() == 0);
        }
        assertThat(removed).extracting(EtcdJanitor.Leftover::ownerToken).contains("token-a", "token-b");
    }
}
