package io.lockstep.bench;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.redis.RedisLockProvider;
import io.lockstep.redlock.RedlockLockProvider;
import io.lockstep.redlock.RedlockOptions;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
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
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.params.SetParams;

/**
 * One uncontended acquire + release, on redis-server processes the benchmark starts on loopback:
 *
 * <ul>
 *   <li>{@code jedis-floor}: raw Jedis on one node, {@code SET NX PX} then the compare-and-delete
 *       script by SHA: the round trips any Redis lock needs, with nothing else;
 *   <li>{@code jedis-floor-N}: the same on N nodes at once from one thread (every request written,
 *       then every reply read): what this machine allows for N nodes, with no lock logic at all;
 *   <li>{@code redis}: lock-redis on one node;
 *   <li>{@code redlock-N}: lock-redlock over N nodes (fan-out in parallel, fenced acquire).
 * </ul>
 *
 * <p>Compare within one run only: machine-to-machine noise is larger than the differences.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class AcquireReleaseBenchmark {

    private static final String RELEASE =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

    /** Which client to measure. */
    @Param({"jedis-floor", "jedis-floor-3", "jedis-floor-5", "redis", "redlock-1", "redlock-3", "redlock-5"})
    public String backend = "redis";

    private final List<RedisServer> servers = new ArrayList<>();
    private final LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30));
    private @Nullable LockProvider provider;
    private @Nullable JedisPooled raw;
    private final List<Jedis> floor = new ArrayList<>();
    private String releaseSha = "";

    /** Starts the servers and the client. */
    @Setup(Level.Trial)
    public void start() {
        int nodes = backend.matches(".*-\\d+") ? Integer.parseInt(backend.substring(backend.lastIndexOf('-') + 1)) : 1;
        for (int i = 0; i < nodes; i++) {
            servers.add(RedisServer.start());
        }
        List<HostAndPort> addresses =
                servers.stream().map(s -> new HostAndPort(s.host(), s.port())).toList();
        switch (backend) {
            case "jedis-floor" -> {
                raw = new JedisPooled(addresses.get(0));
                releaseSha = raw.scriptLoad(RELEASE);
            }
            case "redis" ->
                provider = RedisLockProvider.builder(new JedisPooled(addresses.get(0)))
                        .closeClient(true)
                        .build();
            default ->
                provider = RedlockLockProvider.connect(
                        addresses,
                        DefaultJedisClientConfig.builder().build(),
                        RedlockOptions.defaults(),
                        LockRuntime.defaults());
        }
    }

    /** Stops the client and the servers. */
    @TearDown(Level.Trial)
    public void stop() {
        if (provider != null) {
            provider.close();
        }
        if (raw != null) {
            raw.close();
        }
        floor.forEach(Jedis::close);
        servers.forEach(RedisServer::close);
    }

    /** Takes a free lock and releases it. */
    @Benchmark
    public boolean acquireRelease() {
        if (raw != null) {
            String token = UUID.randomUUID().toString();
            if (!"OK".equals(raw.set("bench", token, SetParams.setParams().nx().px(30_000)))) {
                throw new IllegalStateException("lock was not free");
            }
            return Long.valueOf(1).equals(raw.evalsha(releaseSha, List.of("bench"), List.of(token)));
        }
        if (!floor.isEmpty()) {
            String token = UUID.randomUUID().toString();
            for (Jedis jedis : floor) {
                Connection connection = jedis.getConnection();
                connection.sendCommand(new CommandArguments(Protocol.Command.SET)
                        .key("bench")
                        .add(token)
                        .add("NX")
                        .add("PX")
                        .add(30_000));
                connection.getMany(0);
            }
            for (Jedis jedis : floor) {
                jedis.getConnection().getOne();
            }
            for (Jedis jedis : floor) {
                Connection connection = jedis.getConnection();
                connection.sendCommand(new CommandArguments(Protocol.Command.EVALSHA)
                        .add(releaseSha)
                        .add(1)
                        .key("bench")
                        .add(token));
                connection.getMany(0);
            }
            boolean all = true;
            for (Jedis jedis : floor) {
                all &= Long.valueOf(1).equals(jedis.getConnection().getOne());
            }
            return all;
        }
        Lease lease = provider.tryAcquire("bench", options).orElseThrow();
        return lease.release();
    }
}
