package io.lockstep.bench;

import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import redis.clients.jedis.HostAndPort;

/**
 * Peer libraries doing the same job as {@code redis}, against the same kind of server in the same
 * run, each with its default configuration and its own documented calls.
 */
final class Peers {

    private Peers() {}

    private static RedissonClient redisson(HostAndPort node) {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://" + node.getHost() + ":" + node.getPort());
        return Redisson.create(config);
    }

    /** Redisson {@code RLock}: {@code tryLock(0, 30 s)} (no watchdog), then {@code unlock()}. */
    static final class RedissonRLock implements Contender {
        private final RedissonClient client;

        RedissonRLock(HostAndPort node) {
            this.client = redisson(node);
        }

        @Override
        public void acquireRelease(Caller caller) {
            RLock lock = client.getLock(caller.name);
            boolean held;
            try {
                held = lock.tryLock(0, 30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            if (!held) {
                throw new IllegalStateException("lock '" + caller.name + "' was not free");
            }
            lock.unlock();
        }

        @Override
        public void close() {
            client.shutdown();
        }
    }

    /** Redisson {@code RFencedLock}: {@code tryLockAndGetToken(0, 30 s)}, then {@code unlock()}. */
    static final class RedissonFenced implements Contender {
        private final RedissonClient client;

        RedissonFenced(HostAndPort node) {
            this.client = redisson(node);
        }

        @Override
        public void acquireRelease(Caller caller) {
            RFencedLock lock = client.getFencedLock(caller.name);
            Long token = lock.tryLockAndGetToken(0, 30, TimeUnit.SECONDS);
            if (token == null) {
                throw new IllegalStateException("lock '" + caller.name + "' was not free");
            }
            lock.unlock();
        }

        @Override
        public void close() {
            client.shutdown();
        }
    }
}
