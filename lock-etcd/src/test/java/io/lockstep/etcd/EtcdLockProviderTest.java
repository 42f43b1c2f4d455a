package io.lockstep.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.lockstep.BackendUnavailableException;
import io.lockstep.Holder;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.Locks;
import io.lockstep.tck.servers.LocalServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

@DisplayName("lock-etcd: key layout, queue, sessions and configuration on a real etcd")
class EtcdLockProviderTest {

    private static final LeaseOptions LONG = LeaseOptions.of(Duration.ofSeconds(30));

    @RegisterExtension
    static final SoloEtcd ETCD = new SoloEtcd();

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() {
        for (AutoCloseable c : toClose) {
            try {
                c.close();
            } catch (Exception ignored) {
                // teardown
            }
        }
    }

    private LockProvider open(String prefix) {
        LockProvider p = Locks.open(ETCD.server().uri() + "?timeout=1s&keyPrefix=" + prefix);
        toClose.add(p);
        return p;
    }

    private static List<KeyValue> keys(String prefix) throws Exception {
        return ETCD.admin()
                .getKVClient()
                .get(
                        ByteSequence.from(prefix, StandardCharsets.UTF_8),
                        GetOption.builder().isPrefix(true).build())
                .get(5, TimeUnit.SECONDS)
                .getKvs();
    }

    private static List<String> keyNames(String prefix) throws Exception {
        return keys(prefix).stream()
                .map(kv -> kv.getKey().toString(StandardCharsets.UTF_8))
                .toList();
    }

    @Test
    @DisplayName("a provider wired to an existing jetcd client locks without ServiceLoader and leaves the client open")
    void explicitWiringFromAClient() throws Exception {
        Client client = Client.builder().endpoints(ETCD.server().endpoint()).build();
        try {
            Lease lease;
            try (EtcdLockProvider locks =
                    EtcdLockProvider.builder(client).keyPrefix("wired/").build()) {
                lease = locks.acquire("job", LONG);
                List<KeyValue> keys = keys("wired/#job/");
                assertThat(keys).hasSize(1);
                assertThat(lease.fencingToken().getAsLong())
                        .as("the fence is the holder key's create revision")
                        .isEqualTo(keys.get(0).getCreateRevision());
                assertThat(keys.get(0).getValue().toString(StandardCharsets.UTF_8))
                        .startsWith(lease.ownerToken() + " ");
            }
            assertThat(lease.isValid())
                    .as("closing the provider released its lease")
                    .isFalse();
            assertThat(keys("wired/")).isEmpty();
            assertThat(client.getKVClient()
                            .get(ByteSequence.from("x", StandardCharsets.UTF_8))
                            .get(5, TimeUnit.SECONDS))
                    .as("the caller's client still works")
                    .isNotNull();
        } finally {
            client.close();
        }
    }

    @Test
    @DisplayName("the names a, a/b and a%2Fb are three locks whose keys never share a prefix")
    void encodedNamesNeverMeet() throws Exception {
        LockProvider locks = open("enc/");
        LockProvider other = open("enc/");
        List<Lease> leases = new ArrayList<>();
        for (String name : List.of("a", "a/b", "a%2Fb")) {
            leases.add(locks.acquire(name, LONG));
        }
        for (String name : List.of("a", "a/b", "a%2Fb")) {
            assertThat(other.tryAcquire(name, LONG))
                    .as("lock '%s' is held", name)
                    .isEmpty();
        }
        assertThat(keyNames("enc/"))
                .extracting(k -> k.substring(0, k.lastIndexOf('/') + 1))
                .containsExactlyInAnyOrder("enc/#a/", "enc/#a%2Fb/", "enc/#a%252Fb/");
        leases.get(0).release();
        assertThat(other.tryAcquire("a", LONG))
                .as("releasing 'a' frees only 'a'")
                .isPresent();
        assertThat(other.tryAcquire("a/b", LONG)).isEmpty();
    }

    @Test
    @DisplayName("another client's inspect names the holder's host, pid and label, also after the key moved session")
    void inspectNamesTheHolder() throws Exception {
        LockProvider holder = open("who/");
        LockProvider operator = open("who/");
        Lease lease = holder.acquire("job", LONG.withLabel("nightly-report"));
        LockState seen = operator.inspect("job").orElseThrow();
        assertThat(seen.held()).isTrue();
        assertThat(seen.fencingToken()).isEqualTo(lease.fencingToken());
        assertThat(seen.holder()).contains(Holder.thisProcess("nightly-report"));
        assertThat(seen.toString()).doesNotContain(lease.ownerToken());
        assertThat(lease.extend(Duration.ofSeconds(90)))
                .as("another lease-time class: the key moves")
                .isTrue();
        assertThat(operator.inspect("job").orElseThrow().holder()).contains(Holder.thisProcess("nightly-report"));
        lease.release();
        assertThat(operator.inspect("job").orElseThrow().holder()).isEmpty();
        try (Lease plain = holder.acquire("job", LONG)) {
            assertThat(operator.inspect("job").orElseThrow().holder()).contains(Holder.thisProcess(null));
        }
        // A key written by an older client holds the owner token alone: held, no holder.
        ETCD.admin()
                .getKVClient()
                .put(
                        ByteSequence.from("who/#old/0123", StandardCharsets.UTF_8),
                        ByteSequence.from("0123456789abcdef0123456789abcdef", StandardCharsets.UTF_8))
                .get(5, TimeUnit.SECONDS);
        LockState old = operator.inspect("old").orElseThrow();
        assertThat(old.held()).isTrue();
        assertThat(old.holder()).isEmpty();
    }

    @Test
    @DisplayName("a bad label is refused before anything is taken, naming the label and the rule")
    void aBadLabelTakesNothing() {
        LockProvider locks = open("bad-label/");
        assertThatThrownBy(() -> locks.acquire("job", LONG.withLabel("two words")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("label 'two words' has ' ' at index 3");
        assertThat(locks.inspect("job").orElseThrow().held()).isFalse();
    }

    @Test
    @DisplayName(
            "nested key prefixes (app/ and app/x/) hold independent locks: lock x under app/ is not blocked by app/x/")
    void nestedPrefixesDoNotInterfere() throws Exception {
        LockProvider app = open("app/");
        LockProvider appX = open("app/x/");
        Lease inner = appX.acquire("n", LONG);
        assertThat(app.inspect("x").orElseThrow().held())
                .as("lock 'x' under app/ while app/x/ holds 'n'")
                .isFalse();
        Optional<Lease> outer = app.tryAcquire("x", LONG);
        assertThat(outer).as("lock 'x' under app/ while app/x/ holds 'n'").isPresent();
        assertThat(appX.tryAcquire("n", LONG))
                .as("'n' under app/x/ is still held")
                .isEmpty();
        outer.get().release();
        inner.release();
        assertThatThrownBy(() -> EtcdLockProvider.builder(ETCD.admin()).keyPrefix("app#/"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keyPrefix must not contain '#'");
    }

    @Test
    @DisplayName("tryAcquire without waiting and a waiter that gives up leave no queue entry behind")
    void nothingStaysQueued() throws Exception {
        LockProvider holder = open("queue/");
        LockProvider other = open("queue/");
        holder.acquire("q", LONG);
        assertThat(other.tryAcquire("q", LONG)).isEmpty();
        assertThat(keys("queue/#q/")).as("keys after a failed tryAcquire").hasSize(1);
        assertThat(other.tryAcquire("q", LONG.withWaitTime(Duration.ofMillis(300))))
                .isEmpty();
        assertThat(keys("queue/#q/")).as("keys right after a waiter gave up").hasSize(1);
    }

    @Test
    @DisplayName(
            "a waiter whose session ended while it waited does not report the lock held; it queues again behind later waiters (etcd#11456)")
    void waiterRechecksItsSessionAfterWaiting() throws Exception {
        EtcdLockProvider holder = (EtcdLockProvider) open("recheck/");
        EtcdLockProvider waiter = (EtcdLockProvider) open("recheck/");
        LockProvider later = open("recheck/");
        Lease held = holder.acquire("r", LONG);
        CompletableFuture<Lease> first =
                CompletableFuture.supplyAsync(() -> waiter.acquire("r", LONG.withWaitTime(Duration.ofSeconds(20))));
        awaitKeys("recheck/#r/", 2);
        for (long lease : waiter.sessionLeaseIds()) {
            ETCD.admin().getLeaseClient().revoke(lease).get(5, TimeUnit.SECONDS);
        }
        awaitKeys("recheck/#r/", 1); // the waiter's queue entry went with its session
        CompletableFuture<Lease> second =
                CompletableFuture.supplyAsync(() -> later.acquire("r", LONG.withWaitTime(Duration.ofSeconds(20))));
        awaitKeys("recheck/#r/", 2);
        held.release();
        Lease next = second.get(10, TimeUnit.SECONDS);
        assertThat(next.isValid()).isTrue();
        Thread.sleep(300);
        assertThat(first)
                .as("the waiter whose session ended must not hold the lock too")
                .isNotDone();
        next.release();
        Lease last = first.get(10, TimeUnit.SECONDS);
        assertThat(last.fencingToken().getAsLong())
                .isGreaterThan(next.fencingToken().getAsLong());
        last.release();
    }

    private static void awaitKeys(String prefix, int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (keys(prefix).size() != count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("expected " + count + " keys under " + prefix + ", found " + keyNames(prefix));
            }
            Thread.sleep(10);
        }
    }

    @Test
    @DisplayName("a lease's validity is exactly the lease time asked, on a session lease of 1.5 x it in whole seconds")
    void validityIsWhatWasAsked() throws Exception {
        LockProvider locks = open("ttl/");
        long before = System.nanoTime();
        Lease lease = locks.acquire("t", LeaseOptions.of(Duration.ofMillis(1_400)));
        Duration remaining = lease.remaining();
        assertThat(remaining).isLessThanOrEqualTo(Duration.ofMillis(1_400));
        assertThat(remaining).isGreaterThan(Duration.ofMillis(1_400).minusNanos(System.nanoTime() - before));
        long leaseId = keys("ttl/#t/").get(0).getLease();
        long grantedTtl = ETCD.admin()
                .getLeaseClient()
                .timeToLive(leaseId, io.etcd.jetcd.options.LeaseOption.DEFAULT)
                .get(5, TimeUnit.SECONDS)
                .getGrantedTTL();
        assertThat(grantedTtl).as("session TTL for 1.4 s leases: ceil(2.1 s)").isEqualTo(3);
    }

    @Test
    @DisplayName("an unreachable etcd fails closed with a message naming the endpoint")
    void unreachableNamesTheEndpoint() {
        int port = LocalServer.freePort();
        LockProvider down = Locks.open("etcd://127.0.0.1:" + port + "?timeout=300ms");
        toClose.add(down);
        assertThatThrownBy(() -> down.tryAcquire("x", LONG))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("127.0.0.1:" + port);
    }

    @Test
    @DisplayName("unknown settings are rejected naming the known ones; passwords appear in no message")
    void badConfigurationIsRejected() {
        assertThatThrownBy(() -> Locks.open("etcd://u:s3cret@127.0.0.1:2?keyPrefx=a"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("keyPrefx")
                .hasMessageContaining("keyPrefix")
                .hasMessageContaining("timeout")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> Locks.open("etcd://u:s3cret@127.0.0.1:2?timeout=0ms"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("timeout")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> Locks.open("etcd://127.0.0.1:2?trustStore=/x"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("etcds");
        assertThatThrownBy(() -> Locks.open(LockConfig.of("etcd://127.0.0.1:2").withProperty("user", "u")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("password");
        assertThatThrownBy(() -> Locks.open("etcd://127.0.0.1:99999"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("99999");
        assertThatThrownBy(() -> Locks.open("etcd:///x")).isInstanceOf(LockConfigurationException.class);
        LockProvider p = Locks.open("etcd://u:s3cret@127.0.0.1:2,127.0.0.1:3?timeout=200ms");
        toClose.add(p);
        assertThat(p.toString()).contains("127.0.0.1:2,127.0.0.1:3").doesNotContain("s3cret");
        assertThatThrownBy(() -> p.tryAcquire("x", LONG))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageNotContaining("s3cret");
        assertThat(Optional.of(p)).isPresent();
    }
}
