package io.lockstep.bench;

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
 * One uncontended acquire + release, on redis-server processes the benchmark starts on loopback.
 * Each thread takes a lock of its own, so {@code -t 8} measures eight uncontended callers. The
 * contenders are listed in {@link Contenders}: each Lockstep provider beside its floor, raw Jedis
 * running the same scripts on the same nodes. Every trial ends by checking, from the servers' own
 * command counters, that it ran exactly the commands its name says (see {@link CommandMix}); a trial
 * that did not fails.
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

    /** Which contender to measure. */
    @Param({
        "jedis-setnx",
        "floor-redis",
        "redis",
        "floor-redlock-1",
        "redlock-1",
        "redisson-redlock-1",
        "floor-redlock-3",
        "redlock-3",
        "redisson-redlock-3",
        "floor-redlock-5",
        "redlock-5",
        "redisson-redlock-5"
    })
    public String backend = "redis";

    private Trial trial;

    /** Starts the servers and the client. */
    @Setup(Level.Trial)
    public void start() {
        trial = Trial.start(backend, null);
    }

    /** Checks the commands the servers saw per operation, then stops the client and the servers. */
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
