package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
    @DisplayName("inspect validates the name like acquire does")
    void inspectValidatesTheName() {
        try (LockProvider locks = Locks.open(redis.uri())) {
            assertThatThrownBy(() -> locks.inspect("bad\nname")).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
