package io.lockstep.bench;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
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

/**
 * Acquire + release when each node is a network hop away: every node is reached through an in-JVM
 * TCP proxy ({@code io.lockstep.tck.faults.TcpProxy}) that delays each direction by
 * {@code latencyMicros}, as a LAN would. Here the servers' CPU is small next to the round trip, so
 * the figures show the fan-out itself: N nodes in parallel cost about one round trip per step, N
 * nodes one after the other would cost N. Each trial checks its commands per operation as
 * {@link AcquireReleaseBenchmark} does.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class NetworkLatencyBenchmark {

    /** Which contender to measure. */
    @Param({"floor-redis", "redis", "redlock-1", "floor-redlock-5", "redlock-5"})
    public String backend = "redis";

    /** One-way delay added to every node, in microseconds. */
    @Param({"500"})
    public long latencyMicros = 500;

    private Trial trial;

    /** Starts the servers, the delaying proxies and the client. */
    @Setup(Level.Trial)
    public void start() {
        trial = Trial.start(backend, Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(latencyMicros)));
    }

    /** Checks the commands the servers saw per operation, then stops the client, the proxies and the servers. */
    @TearDown(Level.Trial)
    public void stop(BenchmarkParams params) {
        trial.finish(params);
    }

    /** Takes a free lock and releases it. */
    @Benchmark
    public void acquireRelease(Caller caller) {
        trial.run(caller);
    }
}
