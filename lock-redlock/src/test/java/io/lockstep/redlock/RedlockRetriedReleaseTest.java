package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.redlock.internal.RedlockHandle;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.AttemptContext;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * A release whose first try ran on the nodes but whose replies were lost is retried (by the lease's
 * retry, or the background's); the retry finds the grant's keys gone. Before, that answered "was not
 * held" (a loaded full run, R6 of 2026-11-27, saw {@code RedlockLostRepliesTest}'s release return false).
 * Here the first try is played by running the release script on every node with the grant's value, then
 * the backend's release runs: while the grant is valid, keys gone from the nodes that granted it were
 * deleted by a release of it, so the answer is "released". After its validity, gone keys may simply have
 * expired, so the answer stays "was not held".
 */
@DisplayName("A Redlock release retried after its first try ran unseen")
class RedlockRetriedReleaseTest {

    private static final String RELEASE =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then" + " return redis.call('DEL', KEYS[1]) end return 0";
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

    /** A grant on all three nodes (a quorum of 3 waits for every node's answer). */
    private static RedlockHandle grant(RedisNodes.Client client, Duration leaseTime) {
        String name = "retried-release/" + UUID.randomUUID();
        Attempt<RedlockHandle> attempt = client.backend()
                .tryLock(new AttemptContext(name, UUID.randomUUID().toString(), leaseTime));
        assertThat(attempt.isGranted()).as("a free lock on three healthy nodes").isTrue();
        return attempt.grant().handle();
    }

    /** Runs the release script with the grant's value on every node, as a first try whose replies were lost. */
    private static void releaseUnseen(RedlockHandle handle) {
        for (int i = 0; i < nodes.size(); i++) {
            try (Jedis jedis = nodes.jedis(i)) {
                assertThat(jedis.eval(RELEASE, 1, handle.lockKey(), handle.value()))
                        .as("node %d held the grant's key", i)
                        .isEqualTo(1L);
            }
        }
    }

    @Test
    @DisplayName("while the grant is valid, keys gone from the nodes that granted it mean released")
    void aRetryThatFindsTheKeysGoneReportsReleased() {
        RedlockOptions options = RedlockOptions.defaults().withQuorum(3).withNodeTimeout(Duration.ofSeconds(2));
        try (RedisNodes.Client client = nodes.client(options)) {
            RedlockHandle handle = grant(client, Duration.ofSeconds(30));
            releaseUnseen(handle);
            assertThat(client.backend().release(handle))
                    .as("release of a valid grant whose keys an earlier try deleted")
                    .isTrue();
        }
    }

    @Test
    @DisplayName("after the grant's validity, keys gone mean expired: not released by this call")
    void aReleaseAfterTheValidityThatFindsNothingReportsNotHeld() throws InterruptedException {
        RedlockOptions options = RedlockOptions.defaults().withQuorum(3).withNodeTimeout(Duration.ofSeconds(2));
        try (RedisNodes.Client client = nodes.client(options)) {
            RedlockHandle handle = grant(
                    client, Duration.ofSeconds(3)); // a grant slower than its lease is not granted: seconds, not ms
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            for (int i = 0; i < nodes.size(); i++) { // wait for each node to expire the key, bounded
                try (Jedis jedis = nodes.jedis(i)) {
                    while (jedis.exists(handle.lockKey())) {
                        assertThat(System.nanoTime() - deadline)
                                .as("node %d expires the key", i)
                                .isNegative();
                        Thread.sleep(20);
                    }
                }
            }
            assertThat(client.backend().release(handle))
                    .as("release of a grant whose keys expired")
                    .isFalse();
        }
    }
}
