package io.lockstep.bench;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.redis.RedisLockProvider;
import io.lockstep.redlock.RedlockLockProvider;
import io.lockstep.redlock.RedlockOptions;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;

/**
 * Acquire + release when each node is a network hop away: every node is reached through an in-JVM
 * TCP proxy that delays each direction by {@code latencyMicros}, as a LAN would. Here the servers' CPU
 * is small next to the round trip, so the figures show the fan-out itself: N nodes in parallel cost
 * about one round trip per step, N nodes one after the other would cost N.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class NetworkLatencyBenchmark {

    /** Which client to measure. */
    @Param({"redis", "redlock-1", "redlock-3", "redlock-5"})
    public String backend = "redis";

    /** One-way delay added to every node, in microseconds. */
    @Param({"500"})
    public long latencyMicros = 500;

    private final List<RedisServer> servers = new ArrayList<>();
    private final List<TcpProxy> proxies = new ArrayList<>();
    private final LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30));
    private @Nullable LockProvider provider;

    /** Starts the servers, the delaying proxies and the client. */
    @Setup(Level.Trial)
    public void start() {
        int nodes = backend.startsWith("redlock-") ? Integer.parseInt(backend.substring("redlock-".length())) : 1;
        Duration delay = Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(latencyMicros));
        List<HostAndPort> addresses = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            RedisServer server = RedisServer.start();
            servers.add(server);
            TcpProxy proxy = TcpProxy.start(server.host(), server.port());
            proxy.delay(TcpProxy.Direction.CLIENT_TO_SERVER, delay);
            proxy.delay(TcpProxy.Direction.SERVER_TO_CLIENT, delay);
            proxies.add(proxy);
            addresses.add(new HostAndPort(proxy.host(), proxy.port()));
        }
        provider = backend.equals("redis")
                ? RedisLockProvider.builder(new JedisPooled(addresses.get(0)))
                        .closeClient(true)
                        .build()
                : RedlockLockProvider.connect(
                        addresses,
                        DefaultJedisClientConfig.builder().build(),
                        RedlockOptions.defaults(),
                        LockRuntime.defaults());
    }

    /** Stops the client, the proxies and the servers. */
    @TearDown(Level.Trial)
    public void stop() {
        if (provider != null) {
            provider.close();
        }
        proxies.forEach(TcpProxy::close);
        servers.forEach(RedisServer::close);
    }

    /** Takes a free lock and releases it. */
    @Benchmark
    public boolean acquireRelease() {
        Lease lease = provider.tryAcquire("bench", options).orElseThrow();
        return lease.release();
    }
}
