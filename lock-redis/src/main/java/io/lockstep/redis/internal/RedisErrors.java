package io.lockstep.redis.internal;

import io.lockstep.BackendUnavailableException;
import java.util.NoSuchElementException;
import java.util.function.Supplier;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisClusterOperationException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisRedirectionException;

/** Turns Jedis failures into {@link BackendUnavailableException}s that name the server. */
public final class RedisErrors {

    private RedisErrors() {}

    /** Runs {@code call}, translating Jedis exceptions; {@code where} names the server. */
    public static <T> T translate(String where, String what, Supplier<T> call) {
        try {
            return call.get();
        } catch (JedisConnectionException e) {
            throw new BackendUnavailableException(
                    what + " failed: Redis at " + where + " unreachable: " + rootMessage(e), e, true);
        } catch (JedisAccessControlException e) {
            throw new BackendUnavailableException(
                    what + " failed: Redis at " + where + " refused the credentials: " + e.getMessage(), e, false);
        } catch (JedisException e) {
            if (clusterInTransition(e)) {
                // A slot migrating between primaries (a script whose keys are split: TRYAGAIN), a redirection
                // that a pipeline does not follow, or a cluster between a failure and its failover: asking
                // again shortly works, so the caller's retry (within its wait time) does.
                throw new BackendUnavailableException(
                        what + " failed: the Redis Cluster at " + where + " is moving the key's slot or failing over: "
                                + e.getMessage(),
                        e,
                        true);
            }
            if (e.getCause() instanceof NoSuchElementException) {
                // The pool's maxWait ran out: every connection is busy with a server that does not answer.
                throw new BackendUnavailableException(
                        what + " failed: no connection to Redis at " + where
                                + " came free within the timeout; the server is slow or unreachable",
                        e,
                        true);
            }
            throw new BackendUnavailableException(
                    what + " failed: Redis at " + where + " answered with an error: " + e.getMessage(), e, false);
        }
    }

    /**
     * Whether {@code e} says a cluster is resharding or failing over: {@code TRYAGAIN} (a multi-key
     * command while its slot migrates), {@code CLUSTERDOWN}, a MOVED/ASK left unfollowed, or Jedis giving
     * up after too many redirections.
     */
    static boolean clusterInTransition(JedisException e) {
        if (e instanceof JedisRedirectionException || e instanceof JedisClusterOperationException) {
            return true;
        }
        String message = String.valueOf(e.getMessage());
        return e instanceof JedisDataException && (message.startsWith("TRYAGAIN") || message.startsWith("CLUSTERDOWN"));
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + t + ")";
    }
}
