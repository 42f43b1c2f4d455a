package io.lockstep.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.tck.servers.RedisServer;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import redis.clients.jedis.Jedis;

/**
 * The model in {@link FencedRedlockModelTest} is only as good as its copy of the node's rule: this
 * property runs random sequences of acquires (random values and proposals), releases and expiries
 * against the real {@link Scripts#ACQUIRE} and {@link Scripts#RELEASE} on a real redis-server and
 * against the model's node, and requires the same answers (kind and counter) every step.
 */
class AcquireScriptMatchesModelTest {

    private static RedisServer redis;
    private static Jedis jedis;

    @BeforeContainer
    static void start() {
        redis = RedisServer.start();
        jedis = new Jedis(redis.host(), redis.port());
    }

    @AfterContainer
    static void stop() {
        if (jedis != null) {
            jedis.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Provide
    Arbitrary<List<Integer>> operations() {
        return Arbitraries.integers().between(0, 9_999).list().ofMinSize(1).ofMaxSize(40);
    }

    @Property(tries = 100)
    @Label("the acquire script answers as the model's node does")
    void scriptMatchesModel(@ForAll("operations") List<Integer> operations) {
        String key = "model-check";
        String fenceKey = key + RedlockBackend.FENCE_SUFFIX;
        jedis.del(key, fenceKey);
        FencedRedlockModelTest.NodeState model = new FencedRedlockModelTest.NodeState();
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
