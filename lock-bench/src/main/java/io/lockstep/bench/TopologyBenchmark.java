package io.lockstep.bench;

import io.lockstep.Locks;
import io.lockstep.tck.servers.RedisClusterSetup;
import io.lockstep.tck.servers.RedisSentinel;
import io.lockstep.tck.servers.RedisSentinelSetup;
import io.lockstep.tck.servers.RedisServer;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisSentineled;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * One uncontended acquire + release on the topologies people run: a Sentinel setup (1 primary, 2
 * replicas, 3 sentinels) and a Redis Cluster (3 primaries, 3 replicas), both lock-tck launchers
 * started once per trial on loopback. Rows (the JMH param {@code backend}):
 *
 * <ul>
 *   <li>{@code redis-sentinel} / {@code redis-cluster}: lock-redis through {@code redis-sentinel://} /
 *       {@code redis-cluster://}; their floors {@code floor-redis-sentinel} ({@link JedisSentineled}) and
 *       {@code floor-redis-cluster} ({@link JedisCluster}) run lock-redis's two scripts by EVALSHA;
 *   <li>{@code redis-sentinel-wait1} / {@code redis-cluster-wait1}: lock-redis with {@code waitReplicas=1};
 *       their floors pipeline the acquire script and {@code WAIT 1} on one connection (as lock-redis's
 *       {@code ReplicaAck} does), then run the release script.
 * </ul>
 *
 * <p>Every trial ends by reading {@code INFO commandstats} of the primaries (summed over the cluster's
 * three: a key's commands reach only its slot's primary) and fails unless the primaries saw exactly
 * lock-redis's two scripts per operation, plus one {@code WAIT} for the {@code -wait1} rows. Replicas are
 * not counted: they execute the replicated writes, not the client's commands.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class TopologyBenchmark {

    /** How long {@code WAIT} may block, in lock-redis ({@code waitTimeout}) and in the floors alike. */
    static final long WAIT_TIMEOUT_MILLIS = 1000;

    /** Which contender to measure, on which topology. */
    @Param({
        "floor-redis-sentinel",
        "redis-sentinel",
        "floor-redis-sentinel-wait1",
        "redis-sentinel-wait1",
        "floor-redis-cluster",
        "redis-cluster",
        "floor-redis-cluster-wait1",
        "redis-cluster-wait1"
    })
    public String backend = "redis-sentinel";

    private AutoCloseable servers;
    private Contender contender;
    private CommandMix mix;
    private final LongAdder operations = new LongAdder();

    /** Starts the topology and the client, primes the client, then resets the primaries' counters. */
    @Setup(Level.Trial)
    public void start() {
        boolean cluster = backend.contains("cluster");
        boolean wait = backend.endsWith("-wait1");
        try {
            List<HostAndPort> primaries;
            if (cluster) {
                RedisClusterSetup setup = RedisClusterSetup.start();
                servers = setup;
                contender = backend.startsWith("floor-")
                        ? new Floor(
                                new JedisCluster(
                                        Set.copyOf(addresses(setup.nodes().subList(0, 3)))),
                                wait)
                        : lockstep(setup.uri(), wait);
                primaries = addresses(setup.primaries());
            } else {
                RedisSentinelSetup setup = RedisSentinelSetup.start();
                servers = setup;
                contender = backend.startsWith("floor-")
                        ? new Floor(
                                new JedisSentineled(
                                        RedisSentinelSetup.MASTER_NAME,
                                        DefaultJedisClientConfig.builder().build(),
                                        setup.sentinels().stream()
                                                .map(TopologyBenchmark::address)
                                                .collect(Collectors.toSet()),
                                        DefaultJedisClientConfig.builder().build()),
                                wait)
                        : lockstep(setup.uri(), wait);
                primaries = addresses(List.of(setup.primary()));
            }
            contender.acquireRelease(new Caller("bench/prime"));
            mix = CommandMix.start(primaries);
        } catch (RuntimeException e) {
            stopQuietly();
            throw e;
        }
    }

    /** Checks what the primaries saw per operation, records it for the report, stops the client and the servers. */
    @TearDown(Level.Trial)
    public void stop(BenchmarkParams params) {
        try {
            long ops = operations.sum();
            List<Map<String, Double>> perPrimary = mix.perOperation(ops);
            Map<String, Double> summed = new TreeMap<>();
            perPrimary.forEach(m -> m.forEach((command, perOp) -> summed.merge(command, perOp, Double::sum)));
            // A blocked WAIT makes the primary ask its replicas for their offset (REPLCONF GETACK); they answer
            // with REPLCONF ACK, which the primary counts. Replication traffic, not a client's command, at a
            // rate that depends on timing (one ACK answers every WAIT pending): shown, not checked.
            Double replconf = summed.remove("replconf");
            String name = params.getBenchmark() + " " + backend;
            List<String> missing = mix.missingScripts(
                    List.of(RawFloors.sha1(RawFloors.REDIS_ACQUIRE), RawFloors.sha1(RawFloors.REDIS_RELEASE)));
            if (!missing.isEmpty()) {
                throw new IllegalStateException(name + " did not run the scripts its floor runs ("
                        + String.join(", ", missing) + "): the provider's scripts changed; copy them into RawFloors");
            }
            String line = (perPrimary.size() > 1 ? "summed over " + perPrimary.size() + " primaries: " : "primary: ")
                    + CommandMix.check(name, expected(backend), List.of(summed))
                    + (replconf == null || replconf < CommandMix.NOISE
                            ? ""
                            : " (and replconf " + CommandMix.format(replconf) + " from the replicas)");
            System.out.println();
            System.out.println("Commands per operation, " + backend + " (" + ops + " operations): " + line);
            Map<String, String> paramMap = new LinkedHashMap<>();
            for (String key : params.getParamsKeys()) {
                paramMap.put(key, params.getParam(key));
            }
            CommandMix.record(new CommandMix.MixRecord(
                    params.getBenchmark(),
                    paramMap,
                    params.getThreads(),
                    ops,
                    mix.redisVersion(),
                    List.of(summed),
                    line));
        } finally {
            stopQuietly();
        }
    }

    /** Takes a free lock and releases it. */
    @Benchmark
    public void acquireRelease(Caller caller) {
        contender.acquireRelease(caller);
        operations.increment();
    }

    /** What the primaries must see per operation: lock-redis's two scripts, and one {@code WAIT} when asked. */
    static Map<String, Double> expected(String backend) {
        Map<String, Double> expected = new HashMap<>(Contenders.REDIS_MIX);
        if (backend.endsWith("-wait1")) {
            expected.put("wait", 1.0);
        }
        return expected;
    }

    private static Contender lockstep(String uri, boolean wait) {
        String options = "?timeout=2s" + (wait ? "&waitReplicas=1&waitTimeout=" + WAIT_TIMEOUT_MILLIS + "ms" : "");
        return new Contenders.Lockstep(Locks.open(uri + options));
    }

    private static List<HostAndPort> addresses(List<RedisServer> nodes) {
        return nodes.stream().map(n -> new HostAndPort(n.host(), n.port())).toList();
    }

    private static HostAndPort address(RedisSentinel sentinel) {
        return new HostAndPort(sentinel.host(), sentinel.port());
    }

    private void stopQuietly() {
        try {
            if (contender != null) {
                contender.close();
            }
        } finally {
            try {
                if (servers != null) {
                    servers.close();
                }
            } catch (Exception e) {
                throw new IllegalStateException("could not stop the servers", e);
            }
        }
    }

    /**
     * lock-redis's round trips by raw Jedis on a Sentinel or Cluster client: the acquire script (with
     * {@code WAIT 1} pipelined on the same connection when {@code wait}), then the release script.
     */
    static final class Floor implements Contender {
        private static final String TTL_MILLIS = "30000";
        private final UnifiedJedis jedis;
        private final boolean wait;
        private final String acquireSha;
        private final String releaseSha;

        Floor(UnifiedJedis jedis, boolean wait) {
            this.jedis = jedis;
            this.wait = wait;
            this.acquireSha = jedis.scriptLoad(RawFloors.REDIS_ACQUIRE); // on a cluster: every primary
            this.releaseSha = jedis.scriptLoad(RawFloors.REDIS_RELEASE);
        }

        @Override
        public void acquireRelease(Caller caller) {
            String lockKey = "floor:{" + caller.name + "}";
            String token = UUID.randomUUID().toString();
            List<String> keys = RawFloors.redisKeys(lockKey);
            List<String> args = RawFloors.redisAcquireArgs(token, TTL_MILLIS, "floor:released", caller.name);
            List<?> reply;
            if (wait && jedis instanceof JedisCluster cluster) {
                // One pooled connection to the slot's primary, as lock-redis's ReplicaAck does (Jedis 5.2's
                // ClusterPipeline starts a thread pool per sync).
                try (Connection connection = cluster.getConnectionFromSlot(JedisClusterCRC16.getSlot(lockKey))) {
                    Pipeline pipeline = new Pipeline(connection);
                    Response<Object> acquired = pipeline.evalsha(acquireSha, keys, args);
                    Response<Long> acknowledged = pipeline.waitReplicas(1, WAIT_TIMEOUT_MILLIS);
                    pipeline.sync();
                    reply = (List<?>) acquired.get();
                    if (acknowledged.get() < 1) {
                        throw new IllegalStateException("no replica acknowledged '" + caller.name + "'");
                    }
                }
            } else if (wait) {
                try (AbstractPipeline pipeline = jedis.pipelined()) {
                    Response<Object> acquired = pipeline.evalsha(acquireSha, keys, args);
                    Response<Long> acknowledged = pipeline.waitReplicas(lockKey, 1, WAIT_TIMEOUT_MILLIS);
                    pipeline.sync();
                    reply = (List<?>) acquired.get();
                    if (acknowledged.get() < 1) {
                        throw new IllegalStateException("no replica acknowledged '" + caller.name + "'");
                    }
                }
            } else {
                reply = (List<?>) jedis.evalsha(acquireSha, keys, args);
            }
            if (!Long.valueOf(1).equals(reply.get(0))) {
                throw new IllegalStateException("lock '" + caller.name + "' was not free: " + reply);
            }
            Object released = jedis.evalsha(releaseSha, keys, List.of(token, "floor:released", caller.name));
            if (!Long.valueOf(1).equals(released)) {
                throw new IllegalStateException("release of '" + caller.name + "' freed nothing");
            }
        }

        @Override
        public void close() {
            jedis.close();
        }
    }
}
