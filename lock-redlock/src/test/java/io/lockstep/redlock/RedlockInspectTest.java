package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Holder;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockState;
import java.time.Duration;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.SetParams;

/**
 * {@code inspect} over three real nodes reads a lock as Redlock grants it: held only when one holder's
 * value is on a quorum, free only when no value can be, and "cannot tell" (an exception naming the nodes)
 * when the nodes that did not answer could decide it. The keys of minorities are written with a plain
 * connection, as a round that lost or a node that missed a grant leaves them.
 */
@DisplayName("Redlock inspect")
class RedlockInspectTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    /** Seconds, so that a busy machine never turns a slow answer into a missing one. */
    private static final RedlockOptions OPTIONS = RedlockOptions.defaults().withNodeTimeout(Duration.ofSeconds(2));

    private static RedisNodes nodes;

    @BeforeAll
    static void startNodes() {
        nodes = RedisNodes.start(3);
    }

    @AfterAll
    static void stopNodes() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @AfterEach
    void heal() {
        nodes.heal();
    }

    @Test
    @DisplayName(
            "free, then held with the holder's fence, host, pid and label and at most the lease left, then free with the last fence")
    void followsTheLock() {
        try (RedisNodes.Client holder = nodes.client(OPTIONS);
                RedisNodes.Client operator = nodes.client(OPTIONS)) {
            LockState never = operator.provider().inspect("orders").orElseThrow();
            assertThat(never).isEqualTo(new LockState(false, OptionalLong.empty(), java.util.Optional.empty()));

            Lease lease =
                    holder.provider().acquire("orders", LeaseOptions.of(LEASE).withLabel("nightly-report"));
            LockState held = operator.provider().inspect("orders").orElseThrow();
            assertThat(held.held()).isTrue();
            assertThat(held.fencingToken()).isEqualTo(lease.fencingToken());
            assertThat(held.remaining())
                    .hasValueSatisfying(left -> assertThat(left).isPositive().isLessThanOrEqualTo(LEASE));
            assertThat(held.holder()).contains(Holder.thisProcess("nightly-report"));
            assertThat(held.toString()).doesNotContain(lease.ownerToken());
            assertThat(lease.extend(LEASE))
                    .as("extend compares the whole value, holder included")
                    .isTrue();

            assertThat(lease.release()).isTrue();
            LockState after = operator.provider().inspect("orders").orElseThrow();
            assertThat(after.held()).isFalse();
            assertThat(after.fencingToken()).isEqualTo(lease.fencingToken());
            assertThat(after.holder()).isEmpty();

            try (Lease unlabelled = holder.provider().acquire("orders", LeaseOptions.of(LEASE))) {
                LockState again = operator.provider().inspect("orders").orElseThrow();
                assertThat(again.holder()).contains(Holder.thisProcess(null));
                assertThat(again.fencingToken()).isEqualTo(unlabelled.fencingToken());
            }
        }
    }

    @Test
    @DisplayName(
            "a value on one node of three (a lost round's leftover) is free, with the highest counter as the last fence")
    void aMinorityIsFree() {
        try (RedisNodes.Client operator = nodes.client(OPTIONS);
                Jedis node = nodes.jedis(2)) {
            node.set("leftover", "someone:1 web-3 4242", SetParams.setParams().px(LEASE.toMillis()));
            node.set("leftover\u0000fence", "9");
            LockState seen = operator.provider().inspect("leftover").orElseThrow();
            assertThat(seen.held()).isFalse();
            assertThat(seen.fencingToken()).hasValue(9);
            assertThat(seen.holder()).isEmpty();
        }
    }

    @Test
    @DisplayName("a holder on two nodes is held while the third is down; the time left is when its quorum falls apart")
    void aQuorumWithOneNodeDown() {
        try (RedisNodes.Client operator = nodes.client(OPTIONS)) {
            for (int i = 0; i < 2; i++) {
                try (Jedis node = nodes.jedis(i)) {
                    node.set(
                            "bare",
                            "holder:7 web-3 4242 billing",
                            SetParams.setParams().px(10_000L * (i + 1)));
                    node.set("bare\u0000fence", "5");
                }
            }
            nodes.kill(2);
            LockState seen = operator.provider().inspect("bare").orElseThrow();
            assertThat(seen.held()).isTrue();
            assertThat(seen.fencingToken()).hasValue(5);
            assertThat(seen.holder()).contains(new Holder("web-3", 4242, java.util.Optional.of("billing")));
            // The keys end after 10 s and 20 s: the quorum of two falls apart with the first.
            assertThat(seen.remaining())
                    .hasValueSatisfying(
                            left -> assertThat(left).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(10)));
        }
    }

    @Test
    @DisplayName(
            "a value on one node while another does not answer cannot be told: the nodes are named, nothing is reported")
    void undecidedIsUnavailable() {
        try (RedisNodes.Client operator = nodes.client(OPTIONS);
                Jedis node = nodes.jedis(0)) {
            node.set("maybe", "holder:3", SetParams.setParams().px(LEASE.toMillis()));
            nodes.kill(1);
            assertThatThrownBy(() -> operator.provider().inspect("maybe"))
                    .isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("could not tell whether lock 'maybe' is held")
                    .hasMessageContaining(":" + nodes.port(1));
            // A lock no node holds is free even with one node down: that node alone is no quorum.
            assertThat(operator.provider().inspect("nobody").orElseThrow().held())
                    .isFalse();
        }
    }

    @Test
    @DisplayName("inspect validates the name like acquire does")
    void validatesTheName() {
        try (RedisNodes.Client operator = nodes.client(OPTIONS)) {
            assertThatThrownBy(() -> operator.provider().inspect("bad\nname"))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
