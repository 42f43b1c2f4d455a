package io.lockstep.bench;

import com.sun.management.OperatingSystemMXBean;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.metrics.LockMetrics;
import io.lockstep.tck.servers.RedisServer;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
import org.openjdk.jmh.infra.BenchmarkParams;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import redis.clients.jedis.Jedis;

/**
 * Renewal at scale (issue 12): {@code leases} locks held with automatic renewal on one redis-server for
 * {@code holdSeconds}, lock-redis ({@code redis-renewed}: {@code withAutoRenew()}, renewals batched per
 * round trip) against Redisson {@code RLock.lock()} with its watchdog ({@code redisson-watchdog},
 * {@code lockWatchdogTimeout} set to the same lease time). One JMH shot per trial, in its own JVM.
 *
 * <p>After one unmeasured lease time (warm-up), over the hold it reads what the server was asked
 * ({@code INFO commandstats}: script calls and all commands per second), the client process's CPU
 * time ({@code OperatingSystemMXBean}, less the benchmark thread's own), the heap used after a GC, and
 * the live threads (peak from {@code ThreadMXBean}; lock-redis's {@code lockstep-renewal-*} threads
 * apart, sampled every 50 ms). The trial fails if a lease was lost or the server saw no renewal, so a figure always
 * comes from leases that were renewed and held. The JMH score is the shot's own time (the hold);
 * the figures are recorded beside it for the report ({@link CommandMix#record}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
        value = 1,
        jvmArgs = {"-Xms512m", "-Xmx1g"})
@Warmup(iterations = 0)
@Measurement(iterations = 1)
public class RenewalAtScaleBenchmark {

    /** Whose renewal: lock-redis or Redisson's watchdog. */
    @Param({"redis-renewed", "redisson-watchdog"})
    public String backend = "redis-renewed";

    /** How many leases are held at once. */
    @Param({"1000", "10000"})
    public int leases = 1000;

    /** Each lease's time; both libraries renew at a third of it. */
    @Param({"30"})
    public int leaseSeconds = 30;

    /** How long the leases are held while measured. */
    @Param({"60"})
    public int holdSeconds = 60;

    /** Counts lock-redis's renewals and losses; thread-safe and non-blocking, as metrics must be. */
    private static final class Counts implements LockMetrics {
        final AtomicLong renewed = new AtomicLong();
        final AtomicLong lost = new AtomicLong();

        @Override
        public void renewed(String provider) {
            renewed.incrementAndGet();
        }

        @Override
        public void lost(String provider, LossReason reason) {
            lost.incrementAndGet();
        }
    }

    private final Counts counts = new Counts();
    private final List<Lease> held = new ArrayList<>();
    private final List<RLock> redissonHeld = new ArrayList<>();
    private final OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private @Nullable RedisServer server;
    private @Nullable Jedis admin;
    private @Nullable LockProvider provider;
    private @Nullable RedissonClient redisson;
    private final Map<String, Double> figures = new LinkedHashMap<>();

    /** Starts the server and the client, and takes every lease (not measured). */
    @Setup(Level.Trial)
    public void start() throws InterruptedException {
        server = RedisServer.start();
        admin = new Jedis(server.host(), server.port());
        Duration lease = Duration.ofSeconds(leaseSeconds);
        switch (backend) {
            case "redis-renewed" -> {
                provider = Locks.open(LockConfig.of(server.uri())
                        .withRuntime(LockRuntime.builder().metrics(counts).build()));
                LeaseOptions options = LeaseOptions.of(lease).withAutoRenew();
                for (int i = 0; i < leases; i++) {
                    held.add(provider.tryAcquire("renewed-" + i, options).orElseThrow());
                }
            }
            case "redisson-watchdog" -> {
                Config config = new Config();
                config.setLockWatchdogTimeout(lease.toMillis());
                config.useSingleServer().setAddress("redis://" + server.host() + ":" + server.port());
                redisson = Redisson.create(config);
                for (int i = 0; i < leases; i++) {
                    RLock lock = redisson.getLock("renewed-" + i);
                    lock.lock(); // no lease time: the watchdog renews it
                    redissonHeld.add(lock);
                }
            }
            default -> throw new IllegalArgumentException("backend " + backend);
        }
    }

    /**
     * Lets every lease renew for one lease time unmeasured (a renewal round every third of it, so the
     * JIT has compiled both libraries' renewal paths and the leases taken one by one have settled into
     * their rounds), then holds them for {@code holdSeconds} while measured. The client CPU counted is
     * the process's less this thread's own (the sampling below), over the same window for both
     * libraries.
     */
    @Benchmark
    public Map<String, Double> hold() throws InterruptedException {
        pollUntil(System.nanoTime() + TimeUnit.SECONDS.toNanos(leaseSeconds), new int[1]);
        admin.configResetStat();
        threads.resetPeakThreadCount();
        long renewedBefore = counts.renewed.get();
        long cpuBefore = os.getProcessCpuTime();
        long ownCpuBefore = threads.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        int[] peakRenewal = new int[1];
        pollUntil(start + TimeUnit.SECONDS.toNanos(holdSeconds), peakRenewal);
        double ownCpuMillis = (threads.getCurrentThreadCpuTime() - ownCpuBefore) / 1e6;
        double cpuMillis = (os.getProcessCpuTime() - cpuBefore) / 1e6 - ownCpuMillis;
        int peakThreads = threads.getPeakThreadCount();
        double seconds = (System.nanoTime() - start) / 1e9;
        Map<String, Long> calls = CommandMix.parse(admin.info("commandstats"));
        long scripts = calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
        long commands = calls.entrySet().stream()
                .filter(e -> !CommandMix.SET_UP.contains(e.getKey()))
                .mapToLong(Map.Entry::getValue)
                .sum();
        System.gc();
        figures.put("script calls/s", scripts / seconds);
        figures.put("commands/s", commands / seconds);
        if (backend.equals("redis-renewed")) {
            figures.put("renewals/s", (counts.renewed.get() - renewedBefore) / seconds);
            figures.put("renewal threads peak", (double) peakRenewal[0]);
        }
        figures.put("client CPU ms/s", cpuMillis / seconds);
        figures.put("sampler CPU ms/s", ownCpuMillis / seconds);
        figures.put("heap MB", memory.getHeapMemoryUsage().getUsed() / 1e6);
        figures.put("threads peak", (double) peakThreads);
        return figures;
    }

    /**
     * Samples the {@code lockstep-renewal-*} threads every 50 ms until {@code end} (names only, no
     * stacks: no safepoint), keeping the peak in {@code peakRenewal[0]}.
     */
    private void pollUntil(long end, int[] peakRenewal) throws InterruptedException {
        while (System.nanoTime() - end < 0) {
            int renewal = 0;
            for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds(), 0)) {
                if (info != null && info.getThreadName().startsWith("lockstep-renewal-")) {
                    renewal++;
                }
            }
            peakRenewal[0] = Math.max(peakRenewal[0], renewal);
            Thread.sleep(Math.max(1, Math.min(50, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))));
        }
    }

    /** Checks every lease is still held and the server saw renewals, records the figures, releases and stops. */
    @TearDown(Level.Trial)
    public void stop(BenchmarkParams params) {
        try {
            if (figures.isEmpty()) {
                return;
            }
            if (figures.get("script calls/s") <= 0) {
                throw new IllegalStateException(backend + ": the server saw no renewal in " + holdSeconds + " s");
            }
            if (counts.lost.get() > 0 || !held.stream().allMatch(Lease::isValid)) {
                throw new IllegalStateException(backend + ": " + counts.lost.get() + " leases were lost while held");
            }
            for (RLock lock : redissonHeld) {
                if (!lock.isLocked()) {
                    throw new IllegalStateException(backend + ": " + lock.getName() + " was lost while held");
                }
            }
            String line = String.join(
                    ", ",
                    figures.entrySet().stream()
                            .map(e -> e.getKey() + " " + String.format(Locale.ROOT, "%.1f", e.getValue()))
                            .toList());
            System.out.printf("%nRenewal at scale, %s, %d leases: %s%n", backend, leases, line);
            CommandMix.record(new CommandMix.MixRecord(
                    params.getBenchmark(),
                    paramsOf(params),
                    params.getThreads(),
                    leases,
                    admin.info("server")
                            .lines()
                            .filter(l -> l.startsWith("redis_version:"))
                            .map(l -> l.substring("redis_version:".length()).strip())
                            .findFirst()
                            .orElse("unknown"),
                    List.of(Map.copyOf(figures)),
                    line));
        } finally {
            held.forEach(Lease::release);
            redissonHeld.forEach(RLock::forceUnlock); // JMH may tear down on another thread than set up
            if (provider != null) {
                provider.close();
            }
            if (redisson != null) {
                redisson.shutdown();
            }
            if (admin != null) {
                admin.close();
            }
            if (server != null) {
                server.close();
            }
        }
    }

    private static Map<String, String> paramsOf(BenchmarkParams params) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String key : params.getParamsKeys()) {
            out.put(key, params.getParam(key));
        }
        return out;
    }
}
