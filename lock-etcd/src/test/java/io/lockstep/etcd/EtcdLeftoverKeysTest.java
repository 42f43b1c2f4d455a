package io.lockstep.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.EtcdServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * No key outlives what the provider tracks: a release that fails, or an acquire transaction held in a
 * stalled connection and applied after its attempt was given up, must not leave a key that the
 * provider's session keeps alive while nobody holds the lock (review 2026-11-26, F2, F3, F8).
 */
@DisplayName("lock-etcd leaves no key held by nobody after failed releases and late acquires")
class EtcdLeftoverKeysTest {

    /** Long enough to show that a freed lock is not just a session TTL running out (TTL 15 s). */
    private static final LeaseOptions TEN_SECONDS = LeaseOptions.of(Duration.ofSeconds(10));
    /** Well past the time the janitor needs to delete a leftover key, far below the provider's life. */
    private static final Duration FREE_WITHIN = Duration.ofSeconds(8);

    private static EtcdServer etcd;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeAll
    static void start() {
        etcd = EtcdServer.start();
    }

    @AfterAll
    static void stop() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @AfterEach
    void closeAll() {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (Exception ignored) {
                // teardown
            }
        }
    }

    private TcpProxy proxy() {
        TcpProxy proxy = TcpProxy.start(etcd.host(), etcd.port());
        toClose.add(proxy);
        return proxy;
    }

    private LockProvider open(String endpoints, String prefix) {
        LockProvider p = Locks.open("etcd://" + endpoints + "?timeout=500ms&keyPrefix=" + prefix);
        toClose.add(p);
        return p;
    }

    private LockProvider direct(String prefix) {
        return open(etcd.host() + ":" + etcd.port(), prefix);
    }

    @Test
    @DisplayName(
            "a release whose requests are lost leaves no key behind: the lock is free soon after the network heals")
    void failedReleaseIsNotForgotten() throws Exception {
        TcpProxy proxy = proxy();
        LockProvider holder = open(proxy.host() + ":" + proxy.port(), "f2/");
        LockProvider other = direct("f2/");
        Lease lease = holder.acquire("r1", TEN_SECONDS);

        proxy.drop();
        assertThatThrownBy(lease::release).isInstanceOf(BackendUnavailableException.class);
        proxy.reset().heal();

        // The holder's provider stays open (its session keeps its keys alive): the key must be gone
        // because the provider deleted it, not because a TTL ran out.
        Optional<Lease> next = other.tryAcquire("r1", TEN_SECONDS.withWaitTime(FREE_WITHIN));
        assertThat(next)
                .as("lock 'r1' after a failed release, with the releasing provider still open")
                .isPresent();
        assertThat(next.get().fencingToken().getAsLong())
                .isGreaterThan(lease.fencingToken().getAsLong());
        next.get().release();
    }
}
