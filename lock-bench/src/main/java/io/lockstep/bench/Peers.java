package io.lockstep.bench;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import redis.clients.jedis.HostAndPort;

/**
 * Peer libraries doing the same job as {@code redis} or {@code redlock-N}, against the same kind of
 * server in the same run, each with its default configuration and its own documented calls.
 */
final class Peers {

    private Peers() {}

    private static RedissonClient redisson(HostAndPort node) {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://" + node.getHost() + ":" + node.getPort());
        return Redisson.create(config);
    }

    /** {@code tryLock(0, 30 s)} (no watchdog), which must succeed (the lock is the caller's own), then {@code unlock()}. */
    private static void tryLockThenUnlock(RLock lock, Caller caller) {
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

    /** Redisson {@code RLock}: {@code tryLock(0, 30 s)} (no watchdog), then {@code unlock()}. */
    static final class RedissonRLock implements Contender {
        private final RedissonClient client;

        RedissonRLock(HostAndPort node) {
            this.client = redisson(node);
        }

        @Override
        public void acquireRelease(Caller caller) {
            tryLockThenUnlock(client.getLock(caller.name), caller);
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

    /**
     * Redisson {@code RedissonRedLock} over N nodes, one {@code RedissonClient} per node (Redisson's documented
     * way): {@code tryLock(0, 30 s)} on a RedLock of one {@code RLock} per node, then {@code unlock()}. The
     * clients are created once, here, and shut down by {@link #close}.
     */
    static final class RedissonRedLock implements Contender {
        private final List<RedissonClient> clients = new ArrayList<>();

        RedissonRedLock(List<HostAndPort> nodes) {
            try {
                for (HostAndPort node : nodes) {
                    clients.add(redisson(node));
                }
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }

        // RedissonRedLock is deprecated in Redisson 3.x in favour of a plain RLock on one deployment; it is
        // still what Redisson offers a Redlock user over independent nodes.
        @Override
        @SuppressWarnings("deprecation")
        public void acquireRelease(Caller caller) {
            RLock[] perNode = new RLock[clients.size()];
            for (int i = 0; i < perNode.length; i++) {
                perNode[i] = clients.get(i).getLock(caller.name);
            }
            tryLockThenUnlock(new org.redisson.RedissonRedLock(perNode), caller);
        }

        @Override
        public void close() {
            clients.forEach(RedissonClient::shutdown);
        }
    }

    /**
     * ShedLock's Redis provider ({@code shedlock-provider-redis-spring}) with its defaults, over Spring Data
     * Redis's pooled {@code JedisConnectionFactory} on our Jedis: {@code lock(...)} with lockAtMostFor 30 s and
     * lockAtLeastFor 0, then {@code unlock()}. By default ({@code safeUpdate} off) it locks with {@code SET NX PX}
     * and unlocks with a plain {@code DEL}: no script, no owner check, no fence, no release notice.
     */
    static final class ShedLockRedis implements Contender {
        private final JedisConnectionFactory connections;
        private final RedisLockProvider provider;

        ShedLockRedis(HostAndPort node) {
            this.connections =
                    new JedisConnectionFactory(new RedisStandaloneConfiguration(node.getHost(), node.getPort()));
            connections.afterPropertiesSet();
            connections.start();
            this.provider = new RedisLockProvider.Builder(connections).build();
        }

        @Override
        public void acquireRelease(Caller caller) {
            Optional<SimpleLock> held = provider.lock(
                    new LockConfiguration(Instant.now(), caller.name, Duration.ofSeconds(30), Duration.ZERO));
            held.orElseThrow(() -> new IllegalStateException("lock '" + caller.name + "' was not free"))
                    .unlock();
        }

        @Override
        public void close() {
            connections.destroy();
        }
    }
}
