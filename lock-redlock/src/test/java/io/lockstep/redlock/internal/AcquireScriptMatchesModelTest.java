package io.lockstep.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.lists;

import io.lockstep.tck.servers.RedisServer;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;
import redis.clients.jedis.Jedis;

/**
 * The model in {@link FencedRedlockModelTest} is only as good as its copy of the node's rule: this
 * property runs random sequences of acquires (random values and proposals), releases and expiries
 * against the real {@link Scripts#ACQUIRE} and {@link Scripts#RELEASE} on a real redis-server and
 * against the model's node, and requires the same answers (kind and counter) every step. QuickTheories
 * shrinks a failing sequence and prints the seed that reproduces it ({@code -DQT_SEED=...}).
 */
class AcquireScriptMatchesModelTest {

    private static RedisServer redis;
    private static Jedis jedis;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        jedis = new Jedis(redis.host(), redis.port());
    }

    @AfterAll
    static void stop() {
        if (jedis != null) {
            jedis.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    /** 1 to 40 operations; each value picks the kind (mod 4), the value and the proposal (the rest). */
    static Gen<List<Integer>> operations() {
        return lists().of(Generate.range(0, 9_999)).ofSizeBetween(1, 40);
    }

    @Test
    @DisplayName("the acquire script answers as the model's node does (100 random sequences)")
    void scriptMatchesModel() {
        qt().withExamples(100)
                .forAll(operations())
                .checkAssert(operations -> compare(operations, FencedRedlockModelTest.NodeState::new));
    }

    @Test
    @DisplayName("the comparison fails against a model node that also grants a proposal equal to its counter")
    void comparisonCatchesABrokenModel() {
        assertThatThrownBy(() -> qt().withExamples(100)
                        .forAll(operations())
                        .checkAssert(
                                operations -> compare(operations, () -> new FencedRedlockModelTest.NodeState(false))))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Property falsified")
                .hasMessageContaining("Seed was")
                .hasMessageMatching("(?s).*(kind|counter) after.*"); // a differing answer, not a crash
    }

    private static void compare(List<Integer> operations, Supplier<FencedRedlockModelTest.NodeState> newNode) {
        String key = "model-check";
        String fenceKey = key + RedlockBackend.FENCE_SUFFIX;
        jedis.del(key, fenceKey);
        FencedRedlockModelTest.NodeState model = newNode.get();
        for (int op : operations) {
            int kind = op % 4;
            String value = "v" + (op / 4 % 3); // few values, so releases sometimes match
            long proposal = op / 12 % 8; // small proposals, so stale ones are common
            switch (kind) {
                case 0, 1 -> {
                    AcquireReply real = RedlockBackend.parseAcquire(jedis.eval(
                            Scripts.ACQUIRE.source(),
                            List.of(key, fenceKey),
                            List.of(value, "60000", Long.toString(proposal), "0")));
                    AcquireReply expected = model.acquire(value, proposal);
                    assertThat(real.kind()).as("kind after %s", operations).isEqualTo(expected.kind());
                    assertThat(real.counter())
                            .as("counter after %s", operations)
                            .isEqualTo(expected.counter());
                }
                case 2 -> {
                    Object deleted =
                            jedis.eval(Scripts.RELEASE.source(), List.of(key), List.of(value, "model-check-channel"));
                    boolean modelHeld = value.equals(model.holder);
                    model.release(value);
                    assertThat(deleted).isEqualTo(modelHeld ? 1L : 0L);
                }
                default -> {
                    jedis.del(key); // the TTL passes
                    model.holder = null;
                }
            }
            String stored = jedis.get(fenceKey);
            assertThat(stored == null ? 0L : Long.parseLong(stored)).isEqualTo(model.counter);
        }
    }
}
