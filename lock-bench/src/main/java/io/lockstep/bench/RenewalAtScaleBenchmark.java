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
import io.lockstep.tck.servers.EtcdServer;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
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
 * Renewal at scale (issues 12 and 27): {@code leases} locks held with automatic renewal for {@code
 * holdSeconds}: lock-redis on one redis-server ({@code redis-renewed}: {@code withAutoRenew()}, renewals
 * batched per script call), lock-etcd on one etcd member ({@code etcd-renewed}: the same, renewals batched
 * per read-only transaction, the keys on one shared session lease kept alive by its own keep-alive), and
 * Redisson {@code RLock.lock()} with its watchdog ({@code redisson-watchdog}, {@code lockWatchdogTimeout}
 * set to the same lease time). One JMH shot per trial, in its own JVM.
 *
 * <p>The leases are taken by {@value #TAKERS} threads at once (set-up, not measured). After one unmeasured
 * lease time (warm-up), over the hold it reads what the server was asked (Redis {@code INFO commandstats}:
 * script calls and all commands per second; etcd's {@code grpc_server_msg_received_total} per method:
 * {@code Txn} and {@code LeaseKeepAlive} messages are its renewal round trips), the client process's CPU
 * time ({@code OperatingSystemMXBean}, less the benchmark thread's own), the heap used after a full GC
 * (and per lease: that less the heap after a full GC with the client open but no lease taken, divided by
 * the leases; the handles the benchmark keeps, as a user would, are counted in it), and the live threads
 * (peak from {@code ThreadMXBean}; Lockstep's {@code lockstep-renewal-*} threads apart, sampled every
 * 50 ms). The trial fails if a lease was lost or the server saw no renewal, so a figure always comes from
 * leases that were renewed and held. The JMH score is the shot's own time (the hold); the figures are
 * recorded beside it for the report ({@link CommandMix#record}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
        value = 1,
        jvmArgs = {"-Xms1g", "-Xmx2g"})
@Warmup(iterations = 0)
@Measurement(iterations = 1)
public class RenewalAtScaleBenchmark {

    /** Whose renewal: lock-redis, Redisson's watchdog, or lock-etcd ({@code etcd-renewed}, named with {@code -p}). */
    @Param({"redis-renewed", "redisson-watchdog"})
    public String backend = "redis-renewed";

    /** How many leases are held at once (scripts/bench adds 100,000 for all three contenders). */
    @Param({"1000", "10000"})
    public int leases = 1000;

    /** Each lease's time; both libraries renew at a third of it. */
    @Param({"30"})
    public int leaseSeconds = 30;

    /** How long the leases are held while measured. */
    @Param({"60"})
    public int holdSeconds = 60;

    /** Threads taking the leases at once in the set-up. */
    static final int TAKERS = 8;

    /** Counts lock-redis's and lock-etcd's renewals and losses; thread-safe and non-blocking, as metrics must be. */
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
    private @Nullable EtcdServer etcd;
    private @Nullable Jedis admin;
    private @Nullable LockProvider provider;
    private @Nullable RedissonClient redisson;
    private final Map<String, Double> figures = new LinkedHashMap<>();
    private long heapBeforeLeases;

    /** Starts the server and the client, weighs the heap, and takes every lease (not measured). */
    @Setup(Level.Trial)
    public void start() throws InterruptedException {
        Duration lease = Duration.ofSeconds(leaseSeconds);
        LeaseOptions options = LeaseOptions.of(lease).withAutoRenew();
        switch (backend) {
            case "redis-renewed" -> {
                server = RedisServer.start();
                admin = new Jedis(server.host(), server.port());
                provider = Locks.open(LockConfig.of(server.uri())
                        .withRuntime(LockRuntime.builder().metrics(counts).build()));
                LockProvider locks = provider;
                locks.tryAcquire("prime", LeaseOptions.of(lease)).orElseThrow().release();
                heapBeforeLeases = heapAfterGc();
                held.addAll(take(i -> locks.tryAcquire("renewed-" + i, options).orElseThrow()));
            }
            case "etcd-renewed" -> {
                etcd = EtcdServer.start();
                provider = Locks.open(LockConfig.of(etcd.uri())
                        .withRuntime(LockRuntime.builder().metrics(counts).build()));
                LockProvider locks = provider;
                // The first acquire opens the provider's session (its lease and keep-alive): not per lease.
                locks.tryAcquire("prime", options).orElseThrow().release();
                heapBeforeLeases = heapAfterGc();
                held.addAll(take(i -> locks.tryAcquire("renewed-" + i, options).orElseThrow()));
            }
            case "redisson-watchdog" -> {
                server = RedisServer.start();
                admin = new Jedis(server.host(), server.port());
                Config config = new Config();
                config.setLockWatchdogTimeout(lease.toMillis());
                config.useSingleServer().setAddress("redis://" + server.host() + ":" + server.port());
                RedissonClient client = Redisson.create(config);
                redisson = client;
                RLock prime = client.getLock("prime");
                prime.lock();
                prime.unlock();
                heapBeforeLeases = heapAfterGc();
                redissonHeld.addAll(take(i -> {
                    RLock lock = client.getLock("renewed-" + i);
                    lock.lock(); // no lease time: the watchdog renews it
                    return lock;
                }));
            }
            default -> throw new IllegalArgumentException("backend " + backend);
        }
    }

    /** {@code leases} results of {@code acquire}, by index, from {@value #TAKERS} threads at once. */
    private <T> List<T> take(IntFunction<T> acquire) throws InterruptedException {
        List<T> out = new ArrayList<>(leases);
        long start = System.nanoTime();
        ExecutorService takers = Executors.newFixedThreadPool(TAKERS);
        try {
            List<Future<List<T>>> parts = new ArrayList<>();
            for (int t = 0; t < TAKERS; t++) {
                int first = t;
                parts.add(takers.submit(() -> {
                    List<T> part = new ArrayList<>();
                    for (int i = first; i < leases; i += TAKERS) {
                        part.add(acquire.apply(i));
                    }
                    return part;
                }));
            }
            for (Future<List<T>> part : parts) {
                out.addAll(part.get());
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException(backend + ": taking " + leases + " leases failed", e.getCause());
        } finally {
            takers.shutdownNow();
            takers.awaitTermination(1, TimeUnit.MINUTES);
        }
        System.out.printf(
                Locale.ROOT, "%n%s: took %d leases in %.1f s%n", backend, leases, (System.nanoTime() - start) / 1e9);
        return out;
    }

    /** The heap in use after a full collection (two, so what the first freed and finalized is gone too). */
    private long heapAfterGc() {
        memory.gc();
        memory.gc();
        return memory.getHeapMemoryUsage().getUsed();
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
        Map<String, Long> etcdBefore = Map.of();
        if (admin != null) {
            admin.configResetStat();
        } else {
            etcdBefore = EtcdCounters.received(etcd.endpoint());
        }
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
        long renewals = counts.renewed.get() - renewedBefore;
        if (admin != null) {
            Map<String, Long> calls = CommandMix.parse(admin.info("commandstats"));
            long scripts = calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
            long commands = calls.entrySet().stream()
                    .filter(e -> !CommandMix.SET_UP.contains(e.getKey()))
                    .mapToLong(Map.Entry::getValue)
                    .sum();
            figures.put("renewal round trips/s", scripts / seconds);
            figures.put("requests/s", commands / seconds);
        } else {
            Map<String, Long> after = EtcdCounters.received(etcd.endpoint());
            Map<String, Double> delta = EtcdCounters.perOperation(etcdBefore, after, 1);
            double txn = delta.getOrDefault("Txn", 0.0);
            double keepAlive = delta.getOrDefault("LeaseKeepAlive", 0.0);
            figures.put("renewal round trips/s", (txn + keepAlive) / seconds);
            figures.put(
                    "requests/s",
                    delta.values().stream().mapToDouble(Double::doubleValue).sum() / seconds);
            figures.put("Txn/s", txn / seconds);
            figures.put("LeaseKeepAlive/s", keepAlive / seconds);
        }
        if (!backend.equals("redisson-watchdog")) {
            figures.put("renewals/s", renewals / seconds);
            figures.put("renewal threads peak", (double) peakRenewal[0]);
        }
        figures.put("client CPU ms/s", cpuMillis / seconds);
        figures.put("sampler CPU ms/s", ownCpuMillis / seconds);
        long heap = heapAfterGc();
        figures.put("heap MB", heap / 1e6);
        figures.put("heap per lease B", (heap - heapBeforeLeases) / (double) leases);
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
            if (figures.get("renewal round trips/s") <= 0) {
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
                    admin == null ? EtcdCounters.version(etcd.endpoint()) : redisVersion(admin),
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
            if (etcd != null) {
                etcd.close();
            }
        }
    }

    private static String redisVersion(Jedis admin) {
        return admin.info("server")
                .lines()
                .filter(l -> l.startsWith("redis_version:"))
                .map(l -> l.substring("redis_version:".length()).strip())
                .findFirst()
                .orElse("unknown");
    }

    private static Map<String, String> paramsOf(BenchmarkParams params) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String key : params.getParamsKeys()) {
            out.put(key, params.getParam(key));
        }
        return out;
    }
}
