package io.lockstep.redis.internal;

import io.lockstep.BackendUnavailableException;
import java.time.Duration;
import java.util.List;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisAskDataException;
import redis.clients.jedis.exceptions.JedisClusterOperationException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisRedirectionException;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * {@code waitReplicas}: a script's write counts only once {@code WAIT replicas timeout} says that many
 * replicas have it. {@code WAIT} waits for the last write of <em>its own connection</em>, so the script
 * and {@code WAIT} are sent as one pipeline on one connection (for a cluster, a pooled connection to the
 * primary of {@code sampleKey}'s slot). Immutable.
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
        for (int redirections = 0; ; redirections++) {
            try {
                return runHere(jedis, script, sampleKey, keys, args);
            } catch (JedisRedirectionException | JedisConnectionException e) {
                // A cluster pipeline routes by its slot table, and neither follows redirections nor refreshes
                // the table when a node is gone (Jedis 5).
                if (!(jedis instanceof JedisCluster cluster) || redirections >= MAX_REDIRECTIONS) {
                    throw e;
                }
                if (e instanceof JedisAskDataException ask) {
                    // The slot is migrating and the keys are on the importing node already: ask it directly.
                    return asking(cluster, ask.getTargetNode(), script, keys, args);
                }
                // MOVED, or the node is gone: a keyed read through the cluster client follows the redirection
                // or fails over to a fresh slot table, which the next pipeline routes by.
                cluster.pttl(sampleKey);
            }
        }
    }

    /** How many MOVED answers or lost node connections one call gets past before it gives up (transient: the caller retries). */
    private static final int MAX_REDIRECTIONS = 3;

    private Acknowledged runHere(
            UnifiedJedis jedis, LuaScript script, String sampleKey, List<String> keys, List<String> args) {
        try {
            return pipeline(jedis, script, true, sampleKey, keys, args);
        } catch (JedisDataException e) {
            if (String.valueOf(e.getMessage()).startsWith("NOSCRIPT")) {
                return pipeline(jedis, script, false, sampleKey, keys, args);
            }
            throw e;
        }
    }

    /** {@code ASKING}, the script and {@code WAIT} on one connection to the node an ASK named. */
    private Acknowledged asking(
            JedisCluster cluster, HostAndPort node, LuaScript script, List<String> keys, List<String> args) {
        ConnectionPool pool = cluster.getClusterNodes().get(node.toString());
        if (pool == null) {
            throw new JedisClusterOperationException("ASK named " + node + ", a node the client does not know yet");
        }
        try (Connection connection = pool.getResource()) {
            Pipeline pipeline = new Pipeline(connection);
            pipeline.sendCommand(Protocol.Command.ASKING, new String[0]);
            // EVAL rather than EVALSHA: the importing node may not have the script cached, and this path is rare.
            Response<Object> reply = pipeline.eval(script.source(), keys, args);
            Response<Long> acknowledged = pipeline.waitReplicas(replicas, timeout.toMillis());
            pipeline.sync();
            return new Acknowledged(reply.get(), acknowledged.get());
        }
    }

    private Acknowledged pipeline(
            UnifiedJedis jedis,
            LuaScript script,
            boolean bySha,
            String sampleKey,
            List<String> keys,
            List<String> args) {
        if (jedis instanceof JedisCluster cluster) {
            // Not cluster.pipelined(): Jedis 5.2's ClusterPipeline.sync() starts a new thread pool on every
            // call (a thread per acquire and extend). One pooled connection to the slot's primary does the
            // same round trip; MOVED and a lost node surface as the exceptions run() handles.
            try (Connection connection = cluster.getConnectionFromSlot(JedisClusterCRC16.getSlot(sampleKey))) {
                Pipeline pipeline = new Pipeline(connection);
                Response<Object> reply = bySha
                        ? pipeline.evalsha(script.sha1(), keys, args)
                        : pipeline.eval(script.source(), keys, args);
                Response<Long> acknowledged = pipeline.waitReplicas(replicas, timeout.toMillis());
                pipeline.sync();
                return new Acknowledged(reply.get(), acknowledged.get());
            }
        }
        try (AbstractPipeline pipeline = jedis.pipelined()) {
            Response<Object> reply =
                    bySha ? pipeline.evalsha(script.sha1(), keys, args) : pipeline.eval(script.source(), keys, args);
            Response<Long> acknowledged = pipeline.waitReplicas(sampleKey, replicas, timeout.toMillis());
            pipeline.sync();
            Object value;
            try {
                value = reply.get(); // throws the script's error, NOSCRIPT included
            } catch (IllegalStateException e) {
                // A cluster pipeline logs a failed node connection and leaves that node's replies unset.
                throw new JedisConnectionException(
                        "no reply: the connection to the node serving " + sampleKey + " failed", e);
            }
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
