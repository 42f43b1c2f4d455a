package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Holder;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.Locks;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.SetParams;

class RedisInspectTest {

    private static RedisServer redis;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        redis.close();
    }

    @Test
    @DisplayName(
            "inspect tells free, then held with the holder's fence and a TTL within the lease, then free with the last fence")
    void inspectFollowsTheLock() {
        try (LockProvider locks = Locks.open(redis.uri())) {
            String name = "inspect/" + System.nanoTime();
            LockState never = locks.inspect(name).orElseThrow();
            assertThat(never.held()).isFalse();
            assertThat(never.fencingToken()).isEmpty();
            assertThat(never.remaining()).isEmpty();

            Lease lease = locks.acquire(name, LeaseOptions.of(Duration.ofSeconds(5)));
            LockState held = locks.inspect(name).orElseThrow();
            assertThat(held.held()).isTrue();
            assertThat(held.fencingToken()).isEqualTo(lease.fencingToken());
            assertThat(held.remaining())
                    .hasValueSatisfying(r -> assertThat(r).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5)));

            assertThat(lease.release()).isTrue();
            LockState after = locks.inspect(name).orElseThrow();
            assertThat(after.held()).isFalse();
            assertThat(after.fencingToken()).isEqualTo(lease.fencingToken());
            assertThat(after.remaining()).isEmpty();
        }
    }

    @Test
    @DisplayName("another client sees the holder's host, pid and label; an unlabelled holder shows host and pid")
    void inspectShowsTheHolder() {
        String name = "inspect/holder/" + System.nanoTime();
        try (LockProvider holder = Locks.open(redis.uri());
                LockProvider operator = Locks.open(redis.uri())) {
            try (Lease lease =
                    holder.acquire(name, LeaseOptions.of(Duration.ofSeconds(5)).withLabel("nightly-report"))) {
                LockState seen = operator.inspect(name).orElseThrow();
                assertThat(seen.held()).isTrue();
                assertThat(seen.fencingToken()).isEqualTo(lease.fencingToken());
                assertThat(seen.holder()).contains(Holder.thisProcess("nightly-report"));
                assertThat(seen.holder().orElseThrow().pid())
                        .isEqualTo(ProcessHandle.current().pid());
                assertThat(seen.toString()).doesNotContain(lease.ownerToken());
                assertThat(lease.extend(Duration.ofSeconds(5))).isTrue(); // the scripts compare the whole value
            }
            assertThat(operator.inspect(name).orElseThrow().holder()).isEmpty();
            try (Lease unlabelled = holder.acquire(name, LeaseOptions.of(Duration.ofSeconds(5)))) {
                assertThat(operator.inspect(name).orElseThrow().holder()).contains(Holder.thisProcess(null));
            }
            assertThat(operator.inspect(name).orElseThrow().held()).isFalse();
        }
    }

    @Test
    @DisplayName("a bad label is refused before anything is taken, naming the label and the rule")
    void aBadLabelTakesNothing() {
        String name = "inspect/bad-label/" + System.nanoTime();
        try (LockProvider locks = Locks.open(redis.uri())) {
            assertThatThrownBy(() -> locks.acquire(
                            name, LeaseOptions.of(Duration.ofSeconds(5)).withLabel("two words")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("label 'two words' has ' ' at index 3");
            assertThat(locks.inspect(name).orElseThrow().held()).isFalse();
            assertThat(locks.tryAcquire(name, LeaseOptions.of(Duration.ofSeconds(5))))
                    .isPresent();
        }
    }

    @Test
    @DisplayName("a lock written by an older client (the owner token alone) is held with no holder")
    void anOlderClientsValueHasNoHolder() {
        String name = "inspect/old/" + System.nanoTime();
        try (LockProvider locks = Locks.open(redis.uri());
                Jedis jedis = new Jedis(redis.host(), redis.port())) {
            jedis.set(
                    "lockstep:{" + name + "}",
                    "0123456789abcdef0123456789abcdef",
                    SetParams.setParams().px(5000));
            LockState seen = locks.inspect(name).orElseThrow();
            assertThat(seen.held()).isTrue();
            assertThat(seen.holder()).isEmpty();
        }
    }

    @Test
    @DisplayName("inspect validates the name like acquire does")
    void inspectValidatesTheName() {
        try (LockProvider locks = Locks.open(redis.uri())) {
            assertThatThrownBy(() -> locks.inspect("bad\nname")).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
