package io.lockstep.redis.internal;

import io.lockstep.LossReason;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.UnifiedJedis;

/**
 * How the provider reaches Redis: one server, a primary that Sentinel watches, or a Cluster. The lock
 * operations only need the client and, where the topology has failovers it can see, a signal that the
 * primary which took a write was replaced. Thread-safe.
 */
public interface RedisTopology extends AutoCloseable {

    /** The client every command goes through ({@code JedisPooled}, {@code JedisSentineled}, {@code JedisCluster}). */
    UnifiedJedis client();

    /**
     * Completes (with {@link LossReason#NOT_HELD}) when the primary serving writes at the time of this
     * call is replaced by a failover; null if this topology has no such signal. Take it <em>before</em>
     * sending a write, so a failover that races the write is never missed. Each call returns a signal of
     * its own, which the topology may hold only weakly: keep it for as long as the grant it guards lives.
     */
    @Nullable
    CompletionStage<LossReason> primaryLoss();

    /** Closes the client if this topology owns it, and stops watching for failovers. Idempotent. */
    @Override
    void close();

    /** One server or a cluster through {@code jedis}, with no failover signal. */
    static RedisTopology direct(UnifiedJedis jedis, boolean ownsClient) {
        return new RedisTopology() {
            @Override
            public UnifiedJedis client() {
                return jedis;
            }

            @Override
            public @Nullable CompletionStage<LossReason> primaryLoss() {
                return null;
            }

            @Override
            public void close() {
                if (ownsClient) {
                    jedis.close();
                }
            }
        };
    }
}
