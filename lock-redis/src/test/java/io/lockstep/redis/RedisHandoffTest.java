package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.Locks;
import io.lockstep.MonotonicClock;
import io.lockstep.redis.internal.RedisBackend;
import io.lockstep.redis.internal.RedisKeys;
import io.lockstep.redis.internal.RedisTopology;
import io.lockstep.redis.internal.ReplicaAck;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.AttemptContext;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.Extension;
import io.lockstep.spi.ReleaseWatch;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.FencedRegister;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import io.lockstep.tck.servers.RedisServer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;

/**
 * The handoff on the server (issue 27): a release grants the lock to the first live waiter queued on the
 * server, which takes it from the notice without a request of its own. The protocol's rules are checked
 * on the backend with an injected clock (validity from the last "still waiting" refresh, withdrawal of a
 * grant, dead entries skipped, no queue jumping, a lost notice recovered); the whole provider by
 * histories of contending clients.
 */
@DisplayName("lock-redis: a release hands the lock to the first waiter queued on the server")
class RedisHandoffTest {

    private static final String PREFIX = "handoff:";
    private static final Duration LEASE = Duration.ofSeconds(30);

    private static RedisServer redis;
    private static Jedis admin;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final MonotonicClock clock = now::get;
    private final RedisKeys keys = new RedisKeys(PREFIX);

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        admin = new Jedis(redis.host(), redis.port());
    }

    @AfterAll
    static void stop() {
        admin.close();
        redis.close();
    }

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

    private RedisBackend backend() {
        RedisBackend backend = new RedisBackend(
                RedisTopology.direct(new JedisPooled(redis.host(), redis.port()), true),
                ReplicaAck.NONE,
                PREFIX,
                ClockDrift.DEFAULT_FACTOR,
                redis.host() + ":" + redis.port(),
                clock);
        toClose.add(backend);
        return backend;
    }

    private static String lockName(String what) {
        return what + "/" + System.nanoTime();
    }

    private static AttemptContext context(String name) {
        return new AttemptContext(name, token(), LEASE);
    }

    private static String token() {
        return Long.toHexString(ThreadLocalRandom.current().nextLong())
                + Long.toHexString(ThreadLocalRandom.current().nextLong());
    }

    private ReleaseWatch watch(RedisBackend backend, AttemptContext waiter) {
        ReleaseWatch watch = backend.watch(waiter.name(), waiter.ownerToken());
        toClose.add(watch);
        return watch;
    }

    /**
     * Returns once {@code watch} (of {@code backend}) holds no wake-up from before this call, so its next
     * signal is a notice published after it. A new subscription wakes every watch (a release may have come
     * before it was live), and the first watch of a backend is opened while that subscription starts; a
     * test that then took that wake-up for its grant notice would look for the grant before the notice was
     * read, and take it by a refresh instead (correct, but not the path it counts). The subscriber reads
     * notices in order on one thread, after the wake-ups it gave at its start: once a probe watch has been
     * woken twice by notices published for it, those wake-ups have all been given, and draining {@code
     * watch} removes them.
     */
    private void settle(RedisBackend backend, ReleaseWatch watch) throws InterruptedException {
        String probe = lockName("probe");
        try (ReleaseWatch probeWatch = backend.watch(probe)) {
            for (int round = 1; round <= 2; round++) {
                probeWatch.await(Duration.ZERO);
                admin.publish(keys.releaseChannel(), probe);
                assertThat(probeWatch.await(Duration.ofSeconds(30)))
                        .as("a notice published for the probe watch, round %d, heard within 30 s", round)
                        .isTrue();
            }
        }
        watch.await(Duration.ZERO);
    }

    /** Waits (bounded generously) for a signal on {@code watch}; a grant notice must come. */
    private static void awaitSignal(ReleaseWatch watch) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!watch.await(Duration.ofMillis(200))) {
            assertThat(System.nanoTime() - deadline)
                    .as("waiting 30 s for a notice")
                    .isNegative();
        }
    }

    private String value(String name) {
        return admin.get(keys.lockKey(name));
    }

    @Test
    @DisplayName(
            "a grant taken from a notice is valid from the waiter's last 'still waiting' refresh, with the next fence,"
                    + " and renews, releases and shows its holder like any grant")
    void aNoticedGrantIsValidFromTheLastRefresh() throws Exception {
        RedisBackend holderSide = backend();
        RedisBackend waiterSide = backend();
        String name = lockName("validity");
        Attempt<RedisBackend.Handle> held = holderSide.tryLock(context(name));
        assertThat(held.isGranted()).isTrue();
        AttemptContext waiter = context(name);
        ReleaseWatch watch = watch(waiterSide, waiter);
        now.addAndGet(TimeUnit.SECONDS.toNanos(3));
        long refreshedAt = now.get();
        assertThat(waiterSide.tryLock(waiter).isGranted())
                .as("the waiter's first attempt")
                .isFalse();
        assertThat(admin.lrange(keys.waitListKey(name), 0, -1)).containsExactly(tokenHash(waiter));

        settle(waiterSide, watch);
        long scriptsBefore = scriptCalls();
        assertThat(holderSide.release(held.grant().handle())).isTrue();
        assertThat(value(name)).as("the lock's value after the release").startsWith(waiter.ownerToken() + " ");
        awaitSignal(watch);
        now.addAndGet(TimeUnit.SECONDS.toNanos(10)); // ten seconds pass on the waiter's clock before it looks
        Attempt<RedisBackend.Handle> granted = waiterSide.tryLock(waiter);

        assertThat(granted.isGranted()).isTrue();
        assertThat(scriptCalls() - scriptsBefore)
                .as("script calls from the release to the waiter's grant (the release alone)")
                .isEqualTo(1);
        assertThat(granted.grant().fencingToken().getAsLong())
                .isEqualTo(held.grant().fencingToken().getAsLong() + 1);
        Duration full = ClockDrift.validity(LEASE, ClockDrift.DEFAULT_FACTOR);
        assertThat(granted.grant().validity())
                .as("validity counted from the refresh at %d, asked at %d", refreshedAt, now.get())
                .isEqualTo(full.minusNanos(now.get() - refreshedAt));
        assertThat(admin.pttl(keys.lockKey(name))).isPositive().isLessThanOrEqualTo(LEASE.toMillis());
        assertThat(queueKeys(name)).as("queue keys left").isEmpty();
        watch.close(); // granted: closing the watch keeps the lock
        assertThat(value(name)).startsWith(waiter.ownerToken() + " ");

        LockState state = waiterSide.inspect(name).orElseThrow();
        assertThat(state.held()).isTrue();
        assertThat(state.fencingToken()).isEqualTo(granted.grant().fencingToken());
        assertThat(state.holder()).isPresent();
        assertThat(waiterSide.extendAll(List.of(new Extension<>(granted.grant().handle(), LEASE))))
                .containsExactly(Optional.of(full));
        assertThat(waiterSide.release(granted.grant().handle())).isTrue();
        assertThat(value(name)).isNull();
    }

    @Test
    @DisplayName("a waiter that gives up after a release granted it the lock releases that grant and hands it on")
    void aWithdrawnGrantIsHandedOn() throws Exception {
        RedisBackend backend = backend();
        String name = lockName("withdraw");
        Attempt<RedisBackend.Handle> held = backend.tryLock(context(name));
        AttemptContext quitter = context(name);
        AttemptContext patient = context(name);
        ReleaseWatch quitterWatch = watch(backend, quitter);
        ReleaseWatch patientWatch = watch(backend, patient);
        assertThat(backend.tryLock(quitter).isGranted()).isFalse();
        assertThat(backend.tryLock(patient).isGranted()).isFalse();

        backend.release(held.grant().handle());
        assertThat(value(name)).as("granted to the first waiter").startsWith(quitter.ownerToken() + " ");
        quitterWatch.close(); // gives up without having looked
        assertThat(value(name)).as("handed on to the next waiter").startsWith(patient.ownerToken() + " ");
        awaitSignal(patientWatch);
        Attempt<RedisBackend.Handle> next = backend.tryLock(patient);
        assertThat(next.isGranted()).isTrue();
        assertThat(next.grant().fencingToken().getAsLong())
                .as("two grants since the holder's: the quitter's and this one")
                .isEqualTo(held.grant().fencingToken().getAsLong() + 2);
        assertThat(backend.release(next.grant().handle())).isTrue();
    }

    @Test
    @DisplayName("a waiter taken off the list while its entry lives (as a migrating slot can do) joins the tail"
            + " again at its next refresh, once, and is granted in that place")
    void aWaiterOffTheListJoinsAgain() throws Exception {
        RedisBackend backend = backend();
        String name = lockName("relist");
        QueuedTwo queued = holderAndTwoWaiters(backend, name);
        Attempt<RedisBackend.Handle> held = queued.held();
        AttemptContext dropped = queued.first();
        AttemptContext other = queued.second();
        admin.lrem(keys.waitListKey(name), 0, tokenHash(dropped));
        assertThat(admin.exists(keys.waiterKey(name, tokenHash(dropped))))
                .as("the dropped waiter's entry")
                .isTrue();

        assertThat(backend.tryLock(dropped).isGranted()).as("its refresh").isFalse();
        assertThat(backend.tryLock(dropped).isGranted())
                .as("its second refresh")
                .isFalse();
        assertThat(admin.lrange(keys.waitListKey(name), 0, -1))
                .as("the list after its refreshes")
                .containsExactly(tokenHash(other), tokenHash(dropped));

        assertThat(backend.release(held.grant().handle())).isTrue();
        assertThat(value(name)).as("the first grant").startsWith(other.ownerToken() + " ");
        Attempt<RedisBackend.Handle> first = backend.tryLock(other);
        assertThat(first.isGranted()).isTrue();
        assertThat(backend.release(first.grant().handle())).isTrue();
        assertThat(value(name)).as("the second grant").startsWith(dropped.ownerToken() + " ");
        Attempt<RedisBackend.Handle> second = backend.tryLock(dropped);
        assertThat(second.isGranted()).isTrue();
        assertThat(second.grant().fencingToken().getAsLong())
                .isEqualTo(held.grant().fencingToken().getAsLong() + 2);
        assertThat(backend.release(second.grant().handle())).isTrue();
        assertThat(queueKeys(name)).as("queue keys left").isEmpty();
    }

    @Test
    @DisplayName("a dead waiter's expired entry is skipped by the release; the live one behind it is granted")
    void anExpiredEntryIsSkipped() throws Exception {
        RedisBackend backend = backend();
        String name = lockName("dead");
        Attempt<RedisBackend.Handle> held = backend.tryLock(context(name));
        AttemptContext dead = context(name);
        AttemptContext live = context(name);
        watch(backend, dead);
        ReleaseWatch liveWatch = watch(backend, live);
        assertThat(backend.tryLock(dead).isGranted()).isFalse();
        assertThat(backend.tryLock(live).isGranted()).isFalse();
        // The dead waiter stopped refreshing long ago: its entry expired (1 ms left), its name is still listed.
        admin.pexpire(keys.waiterKey(name, tokenHash(dead)), 1);
        awaitGone(keys.waiterKey(name, tokenHash(dead)));
        assertThat(admin.lrange(keys.waitListKey(name), 0, -1)).containsExactly(tokenHash(dead), tokenHash(live));

        backend.release(held.grant().handle());
        assertThat(value(name)).startsWith(live.ownerToken() + " ");
        assertThat(admin.lrange(keys.waitListKey(name), 0, -1))
                .as("queue after the release")
                .isEmpty();
        awaitSignal(liveWatch);
        assertThat(backend.tryLock(live).isGranted()).isTrue();
    }

    @Test
    @DisplayName("an acquire without a wait never jumps a live queue: a lock freed by expiry goes to the first waiter")
    void noQueueJumping() throws Exception {
        RedisBackend backend = backend();
        String name = lockName("no-jump");
        Attempt<RedisBackend.Handle> held = backend.tryLock(context(name));
        AttemptContext waiter = context(name);
        ReleaseWatch watch = watch(backend, waiter);
        assertThat(backend.tryLock(waiter).isGranted()).isFalse();
        admin.del(keys.lockKey(name)); // the holder's key expired

        assertThat(backend.tryLock(context(name)).isGranted())
                .as("an acquire without a queue entry while a waiter is queued")
                .isFalse();
        assertThat(value(name)).as("the lock, handed to the waiter").startsWith(waiter.ownerToken() + " ");
        awaitSignal(watch);
        Attempt<RedisBackend.Handle> granted = backend.tryLock(waiter);
        assertThat(granted.isGranted()).isTrue();
        assertThat(granted.grant().fencingToken().getAsLong())
                .isEqualTo(held.grant().fencingToken().getAsLong() + 1);
        backend.release(granted.grant().handle());
        assertThat(backend.tryLock(context(name)).isGranted())
                .as("with nobody queued, an acquire without a wait takes a free lock")
                .isTrue();
    }

    @Test
    @DisplayName("a lock freed by expiry: a later waiter's refresh hands it to the first and keeps its own place;"
            + " the first waiter's own refresh takes it")
    void aFreedLockGoesByTheList() throws Exception {
        RedisBackend backend = backend();
        String name = lockName("freed");
        QueuedTwo queued = holderAndTwoWaiters(backend, name);
        Attempt<RedisBackend.Handle> held = queued.held();
        AttemptContext first = queued.first();
        AttemptContext second = queued.second();
        admin.del(keys.lockKey(name)); // the holder's key expired

        assertThat(backend.tryLock(second).isGranted())
                .as("the second waiter's refresh")
                .isFalse();
        assertThat(value(name)).as("the lock, handed to the first").startsWith(first.ownerToken() + " ");
        assertThat(admin.lrange(keys.waitListKey(name), 0, -1))
                .as("the list after the hand-over")
                .containsExactly(tokenHash(second));
        Attempt<RedisBackend.Handle> granted = backend.tryLock(first);
        assertThat(granted.isGranted()).isTrue();
        assertThat(granted.grant().fencingToken().getAsLong())
                .isEqualTo(held.grant().fencingToken().getAsLong() + 1);
        admin.del(keys.lockKey(name)); // the first waiter's grant expired too

        Attempt<RedisBackend.Handle> own = backend.tryLock(second);
        assertThat(own.isGranted())
                .as("the second waiter's refresh, first in line")
                .isTrue();
        assertThat(own.grant().fencingToken().getAsLong())
                .isEqualTo(held.grant().fencingToken().getAsLong() + 2);
        assertThat(queueKeys(name)).as("queue keys left").isEmpty();
        assertThat(backend.release(own.grant().handle())).isTrue();
    }

    @Test
    @DisplayName(
            "a grant whose notice was lost is taken by the waiter's next refresh, valid from that refresh, same fence")
    void aLostNoticeIsRecoveredByTheNextRefresh() throws Exception {
        RedisBackend holderSide = backend();
        String name = lockName("lost-notice");
        Attempt<RedisBackend.Handle> held = holderSide.tryLock(context(name));
        AttemptContext waiter = context(name);
        RedisBackend heard = backend();
        watch(heard, waiter);
        assertThat(heard.tryLock(waiter).isGranted()).isFalse();
        holderSide.release(held.grant().handle());
        assertThat(value(name)).startsWith(waiter.ownerToken() + " ");
        // The same waiter on a client whose subscription never carried the notice (as when pub/sub dropped
        // it): its refresh must find the grant on the server by itself.
        RedisBackend other = backend();
        ReleaseWatch secondWatch = watch(other, waiter);
        Attempt<RedisBackend.Handle> recovered = other.tryLock(waiter);
        assertThat(recovered.isGranted()).isTrue();
        assertThat(recovered.grant().fencingToken().getAsLong())
                .isEqualTo(held.grant().fencingToken().getAsLong() + 1);
        assertThat(recovered.grant().validity()).isEqualTo(ClockDrift.validity(LEASE, ClockDrift.DEFAULT_FACTOR));
        secondWatch.close();
        assertThat(other.release(recovered.grant().handle())).isTrue();
    }

    @Test
    @DisplayName(
            "clients on four connections, waiting, giving up and trying without a wait: exclusive, fences increasing,"
                    + " every increment counted, about one acquire attempt per grant")
    void contendingClientsKeepTheHistoryValid() throws Exception {
        int clients = 4;
        int threadsEach = 2;
        int rounds = 40;
        String name = lockName("history");
        List<LockProvider> providers = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            LockProvider provider = Locks.open(redis.uri() + "?keyPrefix=" + PREFIX);
            toClose.add(provider);
            providers.add(provider);
        }
        History history = new History();
        FencedRegister register = new FencedRegister(name, history);
        long[] counter = {0};
        AtomicLong acknowledged = new AtomicLong();
        AtomicLong grants = new AtomicLong();
        long scriptsBefore = scriptCalls();
        ExecutorService pool = Executors.newFixedThreadPool(clients * threadsEach);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                for (int t = 0; t < threadsEach; t++) {
                    LockProvider provider = providers.get(c);
                    History.Recorder me = history.client("client-" + c + "-" + t);
                    workers.add(pool.submit(() -> {
                        for (int i = 0; i < rounds; i++) {
                            int kind = ThreadLocalRandom.current().nextInt(10);
                            Duration wait = kind == 0
                                    ? Duration.ZERO
                                    : kind == 1 ? Duration.ofMillis(1) : Duration.ofSeconds(60);
                            me.invoke(Op.ACQUIRE, name);
                            Optional<Lease> lease = provider.tryAcquire(
                                    name, LeaseOptions.of(LEASE).withWaitTime(wait));
                            if (lease.isEmpty()) {
                                me.fail(Op.ACQUIRE, name);
                                continue;
                            }
                            grants.incrementAndGet();
                            me.acquired(lease.get());
                            register.write(me.name(), lease.get().fencingToken().getAsLong());
                            me.invoke(Op.INCREMENT, "count");
                            counter[0]++;
                            me.ok(Op.INCREMENT, "count");
                            acknowledged.incrementAndGet();
                            me.release(lease.get());
                        }
                        return null;
                    }));
                }
            }
            for (Future<?> worker : workers) {
                worker.get(300, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        long scripts = scriptCalls() - scriptsBefore;
        history.client("checker").read("count", counter[0]);
        HistoryChecker.strict().check(history).assertValid();
        assertThat(register.rejected()).as("stale writes").isZero();
        assertThat(counter[0]).isEqualTo(acknowledged.get());
        assertThat(value(name)).as("the lock after everyone left").isNull();
        assertThat(queueKeys(name)).as("queue keys left after everyone left").isEmpty();
        System.out.printf(
                "HANDOFF-HISTORY %d grants, %d script calls (releases, attempts, withdrawals)%n",
                grants.get(), scripts);
    }

    @Test
    @DisplayName("two clients handing one lock back and forth: about one script call per grant besides its release"
            + " (a waiter granted by a release sends nothing more)")
    void twoClientsAlternateWithoutAnAttemptAtTheGrant() throws Exception {
        int rounds = 100;
        String name = lockName("alternate");
        LockProvider first = Locks.open(redis.uri() + "?keyPrefix=" + PREFIX);
        LockProvider second = Locks.open(redis.uri() + "?keyPrefix=" + PREFIX);
        toClose.add(first);
        toClose.add(second);
        LeaseOptions options = LeaseOptions.of(LEASE).withWaitTime(Duration.ofSeconds(60));
        first.acquire(name + "/warm", options).release();
        second.acquire(name + "/warm", options).release();
        History history = new History();
        AtomicLong grants = new AtomicLong();
        long scriptsBefore = scriptCalls();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (LockProvider provider : List.of(first, second)) {
                History.Recorder me = history.client("client-" + workers.size());
                workers.add(pool.submit(() -> {
                    for (int i = 0; i < rounds; i++) {
                        me.invoke(Op.ACQUIRE, name);
                        Lease lease = provider.acquire(name, options);
                        me.acquired(lease);
                        grants.incrementAndGet();
                        Thread.sleep(1); // hold long enough for the other to queue
                        me.release(lease);
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(300, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        long attempts = scriptCalls() - scriptsBefore - grants.get(); // one release per grant
        HistoryChecker.strict().check(history).assertValid();
        System.out.printf(
                "HANDOFF-ALTERNATE %d grants, %d acquire attempts, %.2f per grant%n",
                grants.get(), attempts, (double) attempts / grants.get());
        // The woken-waiter protocol needs two per grant (the queueing attempt and the one after the notice).
        assertThat(attempts * 2)
                .as("acquire attempts × 2 for %d grants", grants.get())
                .isLessThanOrEqualTo(3L * grants.get());
    }

    /** What the server names a waiter by: the SHA-1 of its owner token, hex (also RedisOlderServerTest's). */
    static String tokenHash(AttemptContext waiter) throws Exception {
        byte[] digest =
                MessageDigest.getInstance("SHA-1").digest(waiter.ownerToken().getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(digest);
    }

    /** A waiter's inbox: where a release that grants it puts the fence. */
    private String inbox(AttemptContext waiter) throws Exception {
        return keys.inboxKey(waiter.name(), tokenHash(waiter));
    }

    /** The lane flag of a queued waiter's entry (its first character): "1" if it blocks on its inbox. */
    private String lane(AttemptContext waiter) throws Exception {
        String entry = admin.get(keys.waiterKey(waiter.name(), tokenHash(waiter)));
        assertThat(entry).as("the entry of a queued waiter").isNotNull();
        return entry.substring(0, 1);
    }

    /** The wait list and the waiters' entries of {@code name} that exist. */
    private List<String> queueKeys(String name) {
        List<String> found = new ArrayList<>(admin.keys(keys.lockKey(name) + ":waiter:*"));
        if (admin.exists(keys.waitListKey(name))) {
            found.add(keys.waitListKey(name));
        }
        return found;
    }

    /** Waits (up to 30 s) until {@code key} is gone. */
    private void awaitGone(String key) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (admin.exists(key)) {
            assertThat(System.nanoTime() - deadline)
                    .as("%s gone within 30 s", key)
                    .isNegative();
            TimeUnit.MILLISECONDS.sleep(1);
        }
    }

    @Test
    @DisplayName("a release that grants a queued waiter puts the grant's fence in the waiter's inbox, which expires"
            + " by itself")
    void aGrantGoesToTheWaitersInbox() throws Exception {
        RedisBackend backend = backend();
        String name = lockName("inbox");
        Attempt<RedisBackend.Handle> held = backend.tryLock(context(name));
        AttemptContext waiter = context(name);
        watch(backend, waiter);
        assertThat(backend.tryLock(waiter).isGranted()).isFalse();
        assertThat(admin.exists(inbox(waiter))).as("the inbox before any grant").isFalse();

        assertThat(backend.release(held.grant().handle())).isTrue();

        assertThat(admin.lrange(inbox(waiter), 0, -1))
                .as("the waiter's inbox after the release granted it")
                .containsExactly(Long.toString(held.grant().fencingToken().getAsLong() + 1));
        assertThat(admin.pttl(inbox(waiter)))
                .as("the inbox's time to live, ms")
                .isPositive()
                .isLessThanOrEqualTo(5_000);
    }

    @Test
    @DisplayName("the oldest waiter of a provider blocks on its inbox: its grant is taken from there (the inbox is"
            + " emptied) with no request of its own after the release")
    void theOldestWaiterTakesItsGrantFromItsInbox() throws Exception {
        RedisBackend holderSide = backend();
        RedisBackend waiterSide = backend();
        String name = lockName("lane");
        Attempt<RedisBackend.Handle> held = holderSide.tryLock(context(name));
        AttemptContext waiter = context(name);
        ReleaseWatch watch = watch(waiterSide, waiter);
        assertThat(waiterSide.tryLock(waiter).isGranted()).isFalse();
        long scriptsBefore = scriptCalls();
        assertThat(holderSide.release(held.grant().handle())).isTrue();

        assertThat(watch.await(Duration.ofSeconds(30)))
                .as("the waiter woken within 30 s")
                .isTrue();
        assertThat(admin.exists(inbox(waiter)))
                .as("the inbox after the waiter woke: emptied by its BLPOP")
                .isFalse();
        Attempt<RedisBackend.Handle> granted = waiterSide.tryLock(waiter);
        assertThat(granted.isGranted()).isTrue();
        assertThat(granted.grant().fencingToken().getAsLong())
                .isEqualTo(held.grant().fencingToken().getAsLong() + 1);
        assertThat(scriptCalls() - scriptsBefore)
                .as("script calls from the release to the waiter's grant (the release alone)")
                .isEqualTo(1);
        assertThat(waiterSide.release(granted.grant().handle())).isTrue();
    }

    @Test
    @DisplayName("when the oldest waiter gives up, the lane passes to the next, which keeps waiting (not woken"
            + " without a grant) and then takes its grant from its inbox")
    void theLanePassesToTheNextWaiter() throws Exception {
        RedisBackend holderSide = backend();
        RedisBackend waiterSide = backend();
        String name = lockName("lane-passes");
        Attempt<RedisBackend.Handle> held = holderSide.tryLock(context(name));
        AttemptContext quitter = context(name);
        AttemptContext next = context(name);
        ReleaseWatch quitterWatch = watch(waiterSide, quitter);
        ReleaseWatch nextWatch = watch(waiterSide, next);
        assertThat(waiterSide.tryLock(quitter).isGranted()).isFalse();
        assertThat(waiterSide.tryLock(next).isGranted()).isFalse();
        settle(waiterSide, nextWatch);
        long scriptsBefore = scriptCalls();
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "lane-next"));
        try {
            Future<Attempt<RedisBackend.Handle>> nextSide = pool.submit(() -> {
                assertThat(nextWatch.await(Duration.ofSeconds(60))).isTrue();
                return waiterSide.tryLock(next);
            });
            quitterWatch.close(); // withdraws: one script call
            // Released only once the next waiter blocks on its inbox: released earlier, its grant may reach
            // it by the notice first (correct too, but then this test would not show the lane passed).
            awaitBlockedOnInbox("lane-next");
            assertThat(holderSide.release(held.grant().handle())).isTrue();

            Attempt<RedisBackend.Handle> granted = nextSide.get(90, TimeUnit.SECONDS);
            assertThat(granted.isGranted())
                    .as("the next waiter's attempt after its wait ended (a wait ended by the hand-over alone"
                            + " would find the lock still held)")
                    .isTrue();
            assertThat(granted.grant().fencingToken().getAsLong())
                    .isEqualTo(held.grant().fencingToken().getAsLong() + 1);
            assertThat(scriptCalls() - scriptsBefore)
                    .as("script calls: the quitter's withdrawal and the release")
                    .isEqualTo(2);
            assertThat(admin.exists(inbox(next)))
                    .as("the next waiter's inbox, emptied")
                    .isFalse();
            assertThat(waiterSide.release(granted.grant().handle())).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("a grant to the waiter that blocks on its inbox sends no notice (its refresh told the server so);"
            + " a grant to a waiter that waits for notices sends one")
    void aGrantToTheInboxNeedsNoNotice() throws Exception {
        RedisBackend holderSide = backend();
        RedisBackend waiterSide = backend();
        String name = lockName("no-notice");
        Attempt<RedisBackend.Handle> held = holderSide.tryLock(context(name));
        AttemptContext oldest = context(name);
        AttemptContext younger = context(name);
        ReleaseWatch oldestWatch = watch(waiterSide, oldest);
        ReleaseWatch youngerWatch = watch(waiterSide, younger);
        assertThat(waiterSide.tryLock(oldest).isGranted()).isFalse();
        assertThat(waiterSide.tryLock(younger).isGranted()).isFalse();
        assertThat(lane(oldest))
                .as("the oldest waiter's entry: it blocks on its inbox")
                .isEqualTo("1");
        assertThat(lane(younger))
                .as("the younger waiter's entry: it waits for notices")
                .isEqualTo("0");

        long noticesBefore = commandCalls("publish");
        assertThat(holderSide.release(held.grant().handle())).isTrue();
        assertThat(commandCalls("publish") - noticesBefore)
                .as("notices sent by the release that granted the waiter on its inbox")
                .isZero();
        assertThat(oldestWatch.await(Duration.ofSeconds(30)))
                .as("the oldest waiter woken by its inbox within 30 s")
                .isTrue();
        Attempt<RedisBackend.Handle> first = waiterSide.tryLock(oldest);
        assertThat(first.isGranted()).isTrue();
        assertThat(first.grant().fencingToken().getAsLong())
                .isEqualTo(held.grant().fencingToken().getAsLong() + 1);
        oldestWatch.close(); // granted: closing keeps the lock

        noticesBefore = commandCalls("publish");
        assertThat(waiterSide.release(first.grant().handle())).isTrue();
        assertThat(commandCalls("publish") - noticesBefore)
                .as("notices sent by the release that granted the waiter waiting for notices")
                .isEqualTo(1);
        awaitSignal(youngerWatch);
        Attempt<RedisBackend.Handle> second = waiterSide.tryLock(younger);
        assertThat(second.isGranted()).isTrue();
        assertThat(second.grant().fencingToken().getAsLong())
                .isEqualTo(held.grant().fencingToken().getAsLong() + 2);
        assertThat(waiterSide.release(second.grant().handle())).isTrue();
    }

    @Test
    @DisplayName("a grant whose push into the waiter's inbox fails is announced, and the waiter on its inbox still"
            + " takes it")
    void aGrantThatMissesTheInboxIsAnnounced() throws Exception {
        RedisBackend holderSide = backend();
        RedisBackend waiterSide = backend();
        String name = lockName("inbox-refused");
        Attempt<RedisBackend.Handle> held = holderSide.tryLock(context(name));
        AttemptContext waiter = context(name);
        ReleaseWatch watch = watch(waiterSide, waiter);
        assertThat(waiterSide.tryLock(waiter).isGranted()).isFalse();
        assertThat(lane(waiter)).isEqualTo("1");
        admin.set(inbox(waiter), "not a list"); // the release's RPUSH into it fails (WRONGTYPE)
        try {
            long noticesBefore = commandCalls("publish");
            assertThat(holderSide.release(held.grant().handle())).isTrue();
            assertThat(commandCalls("publish") - noticesBefore)
                    .as("notices sent by the release whose push failed")
                    .isEqualTo(1);
            assertThat(value(name)).as("granted all the same").startsWith(waiter.ownerToken() + " ");
            awaitSignal(watch);
            Attempt<RedisBackend.Handle> granted = waiterSide.tryLock(waiter);
            assertThat(granted.isGranted()).isTrue();
            assertThat(granted.grant().fencingToken().getAsLong())
                    .isEqualTo(held.grant().fencingToken().getAsLong() + 1);
            assertThat(waiterSide.release(granted.grant().handle())).isTrue();
        } finally {
            admin.del(inbox(waiter));
        }
    }

    /** Waits (bounded generously) until the thread named {@code name} is in its lane's {@code BLPOP}. */
    private static void awaitBlockedOnInbox(String name) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            for (var entry : Thread.getAllStackTraces().entrySet()) {
                if (entry.getKey().getName().equals(name)) {
                    for (StackTraceElement frame : entry.getValue()) {
                        if (frame.getClassName().endsWith(".GrantLane")
                                && frame.getMethodName().equals("pop")) {
                            return;
                        }
                    }
                }
            }
            assertThat(System.nanoTime() - deadline)
                    .as("thread %s blocked on its inbox within 30 s", name)
                    .isNegative();
            Thread.sleep(2);
        }
    }

    /** Calls of EVALSHA and EVAL the server has counted. */
    private static long scriptCalls() {
        return commandCalls("evalsha") + commandCalls("eval");
    }

    /** How many times the server ran {@code command} (as a client's command or inside a script). */
    private static long commandCalls(String command) {
        for (String line : admin.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                String field = line.substring(line.indexOf("calls=") + 6);
                return Long.parseLong(field.substring(0, field.indexOf(',')));
            }
        }
        return 0;
    }

    /** A holder of a lock and two waiters queued behind it, in this order. */
    private record QueuedTwo(Attempt<RedisBackend.Handle> held, AttemptContext first, AttemptContext second) {}

    /** Takes {@code name} and queues two watching waiters behind the holder, checking each was refused. */
    private QueuedTwo holderAndTwoWaiters(RedisBackend backend, String name) {
        Attempt<RedisBackend.Handle> held = backend.tryLock(context(name));
        assertThat(held.isGranted()).isTrue();
        AttemptContext first = context(name);
        AttemptContext second = context(name);
        watch(backend, first);
        watch(backend, second);
        assertThat(backend.tryLock(first).isGranted()).isFalse();
        assertThat(backend.tryLock(second).isGranted()).isFalse();
        return new QueuedTwo(held, first, second);
    }
}
