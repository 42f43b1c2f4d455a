package io.lockstep.redis.internal;

import io.lockstep.BackendUnavailableException;
import java.time.Duration;
import java.util.List;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * {@code waitReplicas}: a script's write counts only once {@code WAIT replicas timeout} says that many
 * replicas have it. {@code WAIT} waits for the last write of <em>its own connection</em>, so the script
 * and {@code WAIT} are sent as one pipeline, which holds one connection (for a cluster, one per node,
 * chosen by {@code sampleKey}'s slot). Immutable.
 *
 * @param replicas how many replicas must acknowledge; 0 turns the check off
 * @param timeout how long {@code WAIT} may block the connection (shorter than the socket timeout)
 */
public record ReplicaAck(int replicas, Duration timeout) {

    /** No acknowledgement asked: the write counts when the primary answers. */
    public static final ReplicaAck NONE = new ReplicaAck(0, Duration.ZERO);

    /** What a script answered and how many replicas acknowledged its write. */
    record Acknowledged(Object reply, long acknowledgedBy) {}

    /** Whether acknowledgement is asked at all. */
    public boolean enabled() {
        return replicas > 0;
    }

    /**
     * Runs {@code script} and then {@code WAIT} on the same connection.
     *
     * @throws JedisDataException as the script would (translated by the caller)
     */
    Acknowledged run(UnifiedJedis jedis, LuaScript script, String sampleKey, List<String> keys, List<String> args) {
        try {
            return pipeline(jedis, script, true, sampleKey, keys, args);
        } catch (JedisDataException e) {
            if (String.valueOf(e.getMessage()).startsWith("NOSCRIPT")) {
                return pipeline(jedis, script, false, sampleKey, keys, args);
            }
            throw e;
        }
    }

    private Acknowledged pipeline(
            UnifiedJedis jedis,
            LuaScript script,
            boolean bySha,
            String sampleKey,
            List<String> keys,
            List<String> args) {
        try (AbstractPipeline pipeline = jedis.pipelined()) {
            Response<Object> reply =
                    bySha ? pipeline.evalsha(script.sha1(), keys, args) : pipeline.eval(script.source(), keys, args);
            Response<Long> acknowledged = pipeline.waitReplicas(sampleKey, replicas, timeout.toMillis());
            pipeline.sync();
            Object value = reply.get(); // throws the script's error, NOSCRIPT included
            return new Acknowledged(value, acknowledged.get());
        }
    }

    /** The failure to throw when fewer replicas than asked acknowledged a write (transient: retried). */
    BackendUnavailableException notAcknowledged(String what, String where, long acknowledgedBy) {
        return new BackendUnavailableException(
                what + " failed closed: WAIT " + replicas + " " + timeout.toMillis() + " on Redis at " + where
                        + " confirmed the write on " + acknowledgedBy + " replica(s), fewer than waitReplicas="
                        + replicas + "; what was written is released",
                null,
                true);
    }
}
