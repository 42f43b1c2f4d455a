package io.lockstep.redis.internal;

import io.lockstep.LossReason;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.JedisSentineled;
import redis.clients.jedis.UnifiedJedis;

/**
 * A primary that Redis Sentinel watches. Commands go through Jedis' {@link JedisSentineled}, which
 * follows failovers itself; this class adds the failover signal: one thread per provider subscribes to
 * {@code +switch-master} on one sentinel at a time (the next one when it drops), and when the primary
 * changes completes the loss signals that the grants of the old primary's time hold (one each, see
 * {@link FailoverEpoch}: a shared one would keep a listener per lease ever granted). A switch missed
 * while no sentinel was reachable is caught on re-subscription by comparing the primary's address.
 */
public final class SentinelTopology implements RedisTopology {

    private static final Logger log = LoggerFactory.getLogger(SentinelTopology.class);

    private final JedisSentineled jedis;
    private final String masterName;
    private final List<HostAndPort> sentinels;
    private final JedisClientConfig sentinelConfig;
    private final AtomicReference<FailoverEpoch> epoch = new AtomicReference<>(new FailoverEpoch());
    private final Thread watcher;
    private volatile @Nullable HostAndPort primary;
    private volatile @Nullable JedisPubSub subscription;
    private volatile @Nullable Jedis connection;
    private volatile boolean closed;

    /**
     * Watches {@code masterName} through {@code sentinels}; owns and closes {@code jedis}.
     *
     * @param jedis the client, built on the same sentinels and master name
     */
    public SentinelTopology(
            JedisSentineled jedis, String masterName, List<HostAndPort> sentinels, JedisClientConfig sentinelConfig) {
        this.jedis = jedis;
        this.masterName = masterName;
        this.sentinels = List.copyOf(sentinels);
        this.sentinelConfig = sentinelConfig;
        this.primary = jedis.getCurrentMaster();
        this.watcher = new Thread(this::watch, "lockstep-redis-sentinel-watch");
        watcher.setDaemon(true);
        watcher.start();
    }

    @Override
    public UnifiedJedis client() {
        return jedis;
    }

    @Override
    public CompletionStage<LossReason> primaryLoss() {
        return epoch.get().signal();
    }

    /** The current primary's epoch (for tests). */
    FailoverEpoch epoch() {
        return epoch.get();
    }

    /** The primary's address as last seen (for tests and messages). */
    public @Nullable HostAndPort currentPrimary() {
        return primary;
    }

    private void watch() {
        long backoffMillis = 50;
        int next = 0;
        while (!closed) {
            HostAndPort sentinel = sentinels.get(next++ % sentinels.size());
            try (Jedis connection = new Jedis(sentinel, sentinelConfig)) {
                this.connection = connection;
                List<String> address = connection.sentinelGetMasterAddrByName(masterName);
                if (address != null && address.size() == 2) {
                    switched(new HostAndPort(address.get(0), Integer.parseInt(address.get(1))));
                }
                JedisPubSub pubSub = new JedisPubSub() {
                    @Override
                    public void onMessage(String channel, String message) {
                        // "<master name> <old ip> <old port> <new ip> <new port>"
                        String[] parts = message.split(" ");
                        if (parts.length == 5 && parts[0].equals(masterName)) {
                            switched(new HostAndPort(parts[3], Integer.parseInt(parts[4])));
                        }
                    }
                };
                subscription = pubSub;
                if (closed) { // close() ran before the subscription existed

                    return;
                }
                backoffMillis = 50;
                connection.subscribe(pubSub, "+switch-master");
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                log.debug("Sentinel {} not watched ({}); trying the next one", sentinel, e.toString());
            }
            try {
                Thread.sleep(backoffMillis);
            } catch (InterruptedException e) {
                return;
            }
            backoffMillis = Math.min(2000, backoffMillis * 2);
        }
    }

    private void switched(HostAndPort now) {
        HostAndPort before;
        FailoverEpoch ended;
        synchronized (this) {
            before = primary;
            if (Objects.equals(before, now)) {
                return;
            }
            primary = now;
            if (before == null) {
                return;
            }
            ended = epoch.getAndSet(new FailoverEpoch());
        }
        log.warn(
                "Redis primary '{}' failed over from {} to {}: leases it granted without replica"
                        + " acknowledgement are reported lost",
                masterName,
                before,
                now);
        ended.end();
    }

    @Override
    public void close() {
        closed = true;
        JedisPubSub pubSub = subscription;
        if (pubSub != null) {
            try {
                pubSub.unsubscribe();
            } catch (RuntimeException ignored) {
                // not subscribed (yet or any more)
            }
        }
        Jedis current = connection;
        if (current != null) {
            try {
                current.disconnect(); // ends a subscribe() that has not started or never will be unsubscribed
            } catch (RuntimeException ignored) {
                // already closed
            }
        }
        watcher.interrupt();
        jedis.close();
    }
}
