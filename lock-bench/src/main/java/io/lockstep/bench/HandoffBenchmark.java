package io.lockstep.bench;

import com.google.gson.Gson;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.redis.RedisLockProvider;
import io.lockstep.tck.servers.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
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
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisPubSub;

/**
 * Contended handoff on one lock name: every benchmark thread ({@code -t 2}, {@code -t 8}) loops
 * "wait for the lock and hold it {@link #holdMicros} (not measured: JMH's per-invocation set-up), then
 * release it and wait until another thread is granted it (measured)". So JMH's {@code SampleTime}
 * percentiles are the <em>handoff latency</em>: the release round trip, the release notice, the woken
 * waiter's attempt, and this thread seeing the grant. The grantee also records the exact time from
 * just before the release call to its acquire returning; those percentiles (p50, p90, p99, max) are
 * printed and appended as one JSON line to the file named by {@code LOCKSTEP_BENCH_HANDOFF} (system
 * property {@code lockstep.bench.handoff}).
 *
 * <p>{@link #server} {@code redis}, rows: {@code floor-redis} (raw Jedis running lock-redis's two
 * scripts with one pub/sub subscription and a local FIFO queue, the woken waiter sending its own acquire:
 * the three hops lock-redis made before its handoff on the server), {@code floor-redis-handoff} (raw Jedis,
 * lock-redis's protocol since: each waiter queues on the server and takes the grant its notice carries,
 * two hops, the grant delivered by the notice), {@code floor-redis-inbox} (the same, the grant delivered
 * by the waiter's inbox, on which every waiter blocks), {@code floor-redis-2hop-min} (the least a two-hop
 * handoff can ask of the server: {@link MinimalTwoHopLock}, a bound, not a lock to run), {@code redis}
 * (lock-redis: its oldest waiter blocks
 * on its inbox, the others take the notice), {@code redisson-rlock} (Redisson's {@code RLock.lock(30 s)}). Each
 * trial checks at the server that it did what its name says: one fence increment per grant (every row
 * but Redisson's); one release notice per grant, except where a grant goes to a waiter blocked on its
 * inbox, which needs none ({@code floor-redis-inbox} and {@code floor-redis-2hop-min}: none, and a {@code
 * BLPOP} per grant; {@code redis}: at most one); it reports the acquire attempts per grant the server saw.
 *
 * <p>{@link #server} {@code etcd}, {@code zookeeper} and {@code postgresql} run the same loop on one
 * lock name with lock-etcd against jetcd's {@code Lock} client, lock-zookeeper against Curator's {@code
 * InterProcessMutex}, and lock-jdbc's lease and session modes ({@link HandoffRigs}, which also says what
 * each trial checks at its server). Every trial records the server's calls per grant ({@code
 * callsPerGrant} in the JSON line).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class HandoffBenchmark {

    static final String RECORD_PROPERTY = "lockstep.bench.handoff";
    static final String RECORD_ENV = "LOCKSTEP_BENCH_HANDOFF";
    private static final String NAME = "handoff";
    private static final long ALTERNATION_BOUND_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** Which contender to measure; it must run on {@link #server}. */
    @Param({"floor-redis", "redis", "redisson-rlock"})
    public String backend = "redis";

    /** Which server: {@code redis}, {@code etcd}, {@code zookeeper} or {@code postgresql}. */
    @Param({"redis"})
    public String server = "redis";

    /** How long each grant is held, so the other threads are surely waiting when it is released. */
    @Param({"1000"})
    public long holdMicros = 1000;

    private @Nullable Rig rig;
    private @Nullable HandoffLock lock;
    private final AtomicLong grants = new AtomicLong();
    private volatile long releasedAt;
    private volatile long lastHolder = -1;
    private volatile boolean measuring;
    private long[] latencies = new long[1 << 16];
    private int recorded;
    private final Object recordLock = new Object();
    private long[] trialLatencies = new long[0];

    /** Starts the server and the contender; primes it (subscriptions, scripts, sessions) before counting. */
    @Setup(Level.Trial)
    public void start() throws Exception {
        rig = server.equals("redis") ? new RedisRig(backend) : HandoffRigs.start(server, backend);
        try {
            lock = rig.lock();
            lock.acquire().run(); // subscriptions, scripts and sessions are set up before the counters start
            rig.startCounting();
        } catch (Exception | Error e) {
            rig.close(); // no server outlives a failed set-up
            throw e;
        }
    }

    /** Starts recording latencies in measured iterations only. */
    @Setup(Level.Iteration)
    public void iteration(IterationParams params) {
        measuring = params.getType() == IterationType.MEASUREMENT;
    }

    /** One benchmark thread's grant, taken before each measured handoff. */
    @State(Scope.Thread)
    public static class Holder {
        @Nullable
        Runnable release;

        /** Waits for the lock and holds it {@link #holdMicros} (not measured). */
        @Setup(Level.Invocation)
        public void acquire(HandoffBenchmark bench) {
            release = bench.grant();
        }
    }

    private Runnable grant() {
        Runnable release = lock.acquire();
        long grantedAt = System.nanoTime();
        long me = Thread.currentThread().getId();
        long previous = lastHolder;
        long sent = releasedAt;
        if (previous != -1 && previous != me && sent != 0) {
            record(grantedAt - sent);
        }
        lastHolder = me;
        grants.incrementAndGet();
        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(holdMicros));
        return release;
    }

    /** The handoff: release, then wait until another thread was granted (bounded, for the last one). */
    @Benchmark
    public void handoff(Holder holder) {
        long grant = grants.get();
        releasedAt = System.nanoTime();
        holder.release.run();
        long until = System.nanoTime() + ALTERNATION_BOUND_NANOS;
        while (grants.get() == grant && System.nanoTime() - until < 0) {
            Thread.yield();
        }
    }

    private void record(long nanos) {
        if (!measuring) {
            return;
        }
        synchronized (recordLock) {
            if (recorded == latencies.length) {
                latencies = Arrays.copyOf(latencies, latencies.length * 2);
            }
            latencies[recorded++] = nanos;
        }
    }

    /** Folds the iteration's latencies into the trial's. */
    @TearDown(Level.Iteration)
    public void endIteration() {
        synchronized (recordLock) {
            long[] joined = Arrays.copyOf(trialLatencies, trialLatencies.length + recorded);
            System.arraycopy(latencies, 0, joined, trialLatencies.length, recorded);
            trialLatencies = joined;
            recorded = 0;
        }
    }

    /**
     * Prints and records the latency percentiles and the server's calls per grant; fails the trial if
     * the server did not see one grant per counted grant.
     */
    @TearDown(Level.Trial)
    public void stop(BenchmarkParams params) throws Exception {
        try {
            long n = grants.get();
            Counted counted = rig.count(n, params.getThreads());
            Map<String, Double> perGrant = counted.perGrant();
            Map<String, String> paramMap = new LinkedHashMap<>();
            for (String key : params.getParamsKeys()) {
                paramMap.put(key, params.getParam(key));
            }
            CommandMix.record(new CommandMix.MixRecord(
                    params.getBenchmark(),
                    paramMap,
                    params.getThreads(),
                    n,
                    counted.serverVersion(),
                    List.of(perGrant),
                    counted.mix()));
            long[] sorted = trialLatencies.clone();
            Arrays.sort(sorted);
            if (sorted.length == 0) {
                throw new IllegalStateException(
                        backend + ": no handoff between two threads was measured (run with -t 2 or more)");
            }
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("benchmark", params.getBenchmark());
            line.put("server", server);
            line.put("backend", backend);
            line.put("threads", params.getThreads());
            line.put("holdMicros", holdMicros);
            line.put("grants", n);
            line.put("handoffs", sorted.length);
            line.put("p50Micros", micros(percentile(sorted, 0.50)));
            line.put("p90Micros", micros(percentile(sorted, 0.90)));
            line.put("p99Micros", micros(percentile(sorted, 0.99)));
            line.put("maxMicros", micros(sorted[sorted.length - 1]));
            line.put("callsPerGrant", counted.callsPerGrant());
            if (server.equals("redis") && !backend.equals("redisson-rlock")) {
                // one script call per grant releases
                line.put("acquireAttemptsPerGrant", perGrant.getOrDefault("evalsha", 0.0) - 1.0);
            }
            line.put("perGrant", perGrant);
            String json = new Gson().toJson(line);
            System.out.println();
            System.out.println("Handoff " + server + " " + backend + " -t " + params.getThreads() + ": " + json);
            String target = System.getProperty(RECORD_PROPERTY, System.getenv(RECORD_ENV));
            if (target != null && !target.isBlank()) {
                Files.writeString(
                        Path.of(target),
                        json + "\n",
                        StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not append the handoff record", e);
        } finally {
            rig.close();
        }
    }

    private static long percentile(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    private static double micros(long nanos) {
        return Math.round(nanos / 100.0) / 10.0;
    }

    /** What a server counted per grant, checked against the contender's name. */
    record Counted(String serverVersion, Map<String, Double> perGrant, String mix, double callsPerGrant) {}

    /** A server the benchmark started, one contender on it, and the server's own counters. */
    interface Rig extends AutoCloseable {
        /** The contender, shared by every benchmark thread. */
        HandoffLock lock();

        /** Reads the server's counters: from here on, what the contender asks is counted. */
        void startCounting() throws Exception;

        /**
         * What the server saw per grant since {@link #startCounting}, with {@code threads} benchmark
         * threads; throws if it is not what the contender's name says. May close the contender first.
         */
        Counted count(long grants, int threads) throws Exception;

        /** Stops the contender and the server. */
        @Override
        void close();
    }

    /** Redis: one redis-server, {@code INFO commandstats} per grant. */
    static final class RedisRig implements Rig {
        private final String backend;
        private final RedisServer server;
        private final HostAndPort address;
        private final HandoffLock lock;
        private @Nullable CommandMix mix;

        RedisRig(String backend) {
            this.backend = backend;
            server = RedisServer.start();
            address = new HostAndPort(server.host(), server.port());
            lock = switch (backend) {
                case "floor-redis" -> new FloorLock(address);
                case "floor-redis-handoff" -> new FloorHandoffLock(address, false);
                case "floor-redis-inbox" -> new FloorHandoffLock(address, true);
                case "floor-redis-2hop-min" -> new MinimalTwoHopLock(address);
                case "redis" ->
                    new LockstepLock(RedisLockProvider.builder(new JedisPooled(address))
                            .closeClient(true)
                            .build());
                case "redisson-rlock" -> new RedissonLock(address);
                default -> {
                    server.close();
                    throw new IllegalArgumentException(
                            "Redis runs 'floor-redis', 'floor-redis-handoff', 'floor-redis-inbox',"
                                    + " 'floor-redis-2hop-min', 'redis' and 'redisson-rlock', not '"
                                    + backend + "'");
                }
            };
        }

        @Override
        public HandoffLock lock() {
            return lock;
        }

        @Override
        public void startCounting() {
            mix = CommandMix.start(List.of(address));
        }

        @Override
        public Counted count(long n, int threads) {
            List<Map<String, Double>> perServer = mix.perOperation(n);
            Map<String, Double> perGrant = perServer.get(0);
            double notices = perGrant.getOrDefault("publish", 0.0);
            // A grant to a waiter blocked on its inbox needs no notice: every waiter of the inbox floor and
            // of the minimal one blocks so, lock-redis's oldest waiter does (the others take notices).
            boolean everyGrantToAnInbox = backend.equals("floor-redis-inbox") || backend.equals("floor-redis-2hop-min");
            double expectedNotices = everyGrantToAnInbox ? 0.0 : 1.0;
            boolean noticesAsExpected = backend.equals("redis")
                    ? notices <= 1.0 + CommandMix.NOISE
                    : Math.abs(notices - expectedNotices) <= CommandMix.NOISE;
            if (!noticesAsExpected) {
                throw new IllegalStateException("HandoffBenchmark " + backend + ": the server saw " + notices
                        + " release notices per grant over " + n + " grants, expected "
                        + (backend.equals("redis") ? "at most 1" : expectedNotices) + ": " + perGrant);
            }
            if (everyGrantToAnInbox) {
                // Its name says every grant is delivered by the inbox: a BLPOP that pops it, at least.
                double pops = perGrant.getOrDefault("blpop", 0.0);
                if (pops < 0.9) {
                    throw new IllegalStateException("HandoffBenchmark " + backend + ": the server saw " + pops
                            + " BLPOP per grant over " + n + " grants, expected at least 1: " + perGrant);
                }
            }
            if (!backend.equals("redisson-rlock")) {
                double fences = perGrant.getOrDefault("incr", 0.0);
                if (Math.abs(fences - 1.0) > CommandMix.NOISE) {
                    throw new IllegalStateException("HandoffBenchmark " + backend + ": the server saw " + fences
                            + " fence increments per grant over " + n + " grants, expected 1: " + perGrant);
                }
            }
            return new Counted(
                    mix.redisVersion(),
                    perGrant,
                    CommandMix.describe(perServer),
                    perGrant.getOrDefault("evalsha", 0.0) + perGrant.getOrDefault("eval", 0.0));
        }

        @Override
        public void close() {
            try {
                lock.close();
            } finally {
                server.close();
            }
        }
    }

    /** One contender's blocking lock on {@link #NAME}. */
    interface HandoffLock extends AutoCloseable {
        /** Waits until granted; returns the release. */
        Runnable acquire();

        @Override
        void close();
    }

    /** A Lockstep provider (lock-redis, lock-etcd, lock-zookeeper, lock-jdbc): {@code acquire} with a wait, {@code release}. */
    static final class LockstepLock implements HandoffLock {
        private static final LeaseOptions OPTIONS =
                LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(30));
        private final LockProvider provider;

        LockstepLock(LockProvider provider) {
            this.provider = provider;
        }

        @Override
        public Runnable acquire() {
            Lease lease = provider.acquire(NAME, OPTIONS);
            return () -> {
                if (!lease.release()) {
                    throw new IllegalStateException("release of '" + NAME + "' freed nothing");
                }
            };
        }

        @Override
        public void close() {
            provider.close();
        }
    }

    /** Redisson {@code RLock}: {@code lock(30 s)} (waits on its pub/sub channel; no watchdog), {@code unlock()}. */
    static final class RedissonLock implements HandoffLock {
        private final RedissonClient client;
        private final RLock lock;

        RedissonLock(HostAndPort address) {
            Config config = new Config();
            config.useSingleServer().setAddress("redis://" + address.getHost() + ":" + address.getPort());
            client = Redisson.create(config);
            lock = client.getLock(NAME);
        }

        @Override
        public Runnable acquire() {
            lock.lock(30, TimeUnit.SECONDS);
            return lock::unlock;
        }

        @Override
        public void close() {
            client.shutdown();
        }
    }

    /**
     * The floor: lock-redis's acquire and release scripts by raw Jedis, one subscription to a release
     * channel for the process, and a fair local lock so only the first local waiter asks Redis (as
     * lock-redis's local queue does). A waiter sends the acquire script; if the lock is held it parks
     * until a release notice (or 100 ms) and sends it again.
     */
    static final class FloorLock implements HandoffLock {
        private static final String CHANNEL = "floor:release";
        private final JedisPooled jedis;
        private final String acquireSha;
        private final String releaseSha;
        private final ReentrantLock localQueue = new ReentrantLock(true);
        private final AtomicLong notices = new AtomicLong();
        private volatile @Nullable Thread head;
        private final JedisPubSub subscription;
        private final Thread subscriber;

        FloorLock(HostAndPort address) {
            jedis = new JedisPooled(address);
            acquireSha = jedis.scriptLoad(RawFloors.REDIS_ACQUIRE, NAME);
            releaseSha = jedis.scriptLoad(RawFloors.REDIS_RELEASE, NAME);
            CountDownLatch subscribed = new CountDownLatch(1);
            subscription = new JedisPubSub() {
                @Override
                public void onSubscribe(String channel, int count) {
                    subscribed.countDown();
                }

                @Override
                public void onMessage(String channel, String message) {
                    notices.incrementAndGet();
                    Thread waiting = head;
                    if (waiting != null) {
                        LockSupport.unpark(waiting);
                    }
                }
            };
            subscriber = new Thread(
                    () -> {
                        try (Jedis connection = new Jedis(address)) {
                            connection.subscribe(subscription, CHANNEL);
                        }
                    },
                    "floor-subscriber");
            subscriber.setDaemon(true);
            subscriber.start();
            try {
                if (!subscribed.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the floor's subscription did not start within 10 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }

        @Override
        public Runnable acquire() {
            String token = UUID.randomUUID().toString();
            List<String> keys = RawFloors.redisKeys("floor:{" + NAME + "}");
            List<String> args = RawFloors.redisAcquireArgs(token, "30000", CHANNEL, NAME);
            localQueue.lock();
            try {
                head = Thread.currentThread();
                while (true) {
                    long seen = notices.get();
                    List<?> reply = (List<?>) jedis.evalsha(acquireSha, keys, args);
                    if ((Long) reply.get(0) == 1) {
                        break;
                    }
                    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
                    while (notices.get() == seen && System.nanoTime() - until < 0) {
                        LockSupport.parkNanos(this, until - System.nanoTime());
                    }
                }
            } finally {
                head = null;
                localQueue.unlock();
            }
            return () -> {
                Object released = jedis.evalsha(releaseSha, keys, List.of(token, CHANNEL, NAME));
                if ((Long) released != 1) {
                    throw new IllegalStateException("release of '" + NAME + "' freed nothing");
                }
            };
        }

        @Override
        public void close() {
            subscription.unsubscribe();
            try {
                subscriber.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            jedis.close();
        }
    }

    /**
     * The floors of lock-redis's handoff: raw Jedis, each waiter queues on the server with lock-redis's
     * acquire script (a queue entry of 5 s); the release script grants the first waiter. Two hops per
     * handoff: the release, and its delivery to the waiter. {@code floor-redis-handoff} delivers by the
     * notice: the waiter parks until the subscriber thread reads the notice of a grant to its own token
     * (or 100 ms, then refreshes its entry). {@code floor-redis-inbox} ({@code inbox}) delivers by the
     * inbox: every waiter blocks in {@code BLPOP} on its own inbox for up to 100 ms (then refreshes), on a
     * pooled connection of its own, where lock-redis blocks only its oldest waiter and the others take
     * the notice; each of its waiters tells the server so at every refresh, so its grants send no notice.
     */
    static final class FloorHandoffLock implements HandoffLock {
        private static final String CHANNEL = "floor:release";
        private final boolean inbox;
        private final JedisPooled jedis;
        private final String acquireSha;
        private final String releaseSha;
        private final java.util.concurrent.ConcurrentHashMap<String, Thread> waiting =
                new java.util.concurrent.ConcurrentHashMap<>();
        private final java.util.concurrent.ConcurrentHashMap<String, Boolean> granted =
                new java.util.concurrent.ConcurrentHashMap<>();
        private final JedisPubSub subscription;
        private final Thread subscriber;

        FloorHandoffLock(HostAndPort address, boolean inbox) {
            this.inbox = inbox;
            jedis = new JedisPooled(address);
            acquireSha = jedis.scriptLoad(RawFloors.REDIS_ACQUIRE, NAME);
            releaseSha = jedis.scriptLoad(RawFloors.REDIS_RELEASE, NAME);
            CountDownLatch subscribed = new CountDownLatch(1);
            subscription = new JedisPubSub() {
                @Override
                public void onSubscribe(String channel, int count) {
                    subscribed.countDown();
                }

                @Override
                public void onMessage(String channel, String message) {
                    String[] fields = message.split("\u001f");
                    if (fields.length == 3 && waiting.containsKey(fields[1])) {
                        granted.put(fields[1], Boolean.TRUE);
                        Thread waiter = waiting.get(fields[1]);
                        if (waiter != null) {
                            LockSupport.unpark(waiter);
                        }
                    }
                }
            };
            subscriber = new Thread(
                    () -> {
                        try (Jedis connection = new Jedis(address)) {
                            connection.subscribe(subscription, CHANNEL);
                        }
                    },
                    "floor-handoff-subscriber");
            subscriber.setDaemon(true);
            subscriber.start();
            try {
                if (!subscribed.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the floor's subscription did not start within 10 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }

        @Override
        public Runnable acquire() {
            String token = UUID.randomUUID().toString().replace("-", "");
            String hash = RawFloors.sha1(token);
            List<String> keys = RawFloors.redisKeys("floor:{" + NAME + "}");
            // The last argument tells the server whether the waiter blocks on its inbox (then its grant
            // comes without a notice) or waits for the notice.
            List<String> args = List.of(token, "30000", "5000", hash, CHANNEL, NAME, inbox ? "1" : "0");
            if (!inbox) {
                waiting.put(hash, Thread.currentThread());
            }
            try {
                while (true) {
                    List<?> reply = (List<?>) jedis.evalsha(acquireSha, keys, args);
                    if ((Long) reply.get(0) == 1) {
                        break;
                    }
                    if (inbox) {
                        if (jedis.blpop(0.1, keys.get(0) + ":grant:" + hash) != null) {
                            break;
                        }
                        continue;
                    }
                    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
                    while (granted.get(hash) == null && System.nanoTime() - until < 0) {
                        LockSupport.parkNanos(this, until - System.nanoTime());
                    }
                    if (granted.remove(hash) != null) {
                        break;
                    }
                }
            } finally {
                waiting.remove(hash);
                granted.remove(hash);
            }
            return () -> {
                Object released = jedis.evalsha(releaseSha, keys, List.of(token, CHANNEL, NAME));
                if ((Long) released != 1) {
                    throw new IllegalStateException("release of '" + NAME + "' freed nothing");
                }
            };
        }

        @Override
        public void close() {
            subscription.unsubscribe();
            try {
                subscriber.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            jedis.close();
        }
    }

    /**
     * {@code floor-redis-2hop-min}: the least a two-hop handoff can ask of the server, to show what the
     * protocol's own work costs. Raw Jedis; the queue is a plain list of owner tokens (no entry expiry, so
     * a dead waiter would block it, and nothing skips one: not a lock anyone should run). Acquire is {@code
     * GET}, {@code LLEN}, {@code SET PX}, {@code INCR}, or {@code LPOS} + {@code RPUSH} onto the queue; the
     * release that finds a waiter runs six commands ({@code GET}, {@code LPOP}, {@code SET PX}, {@code
     * INCR}, and {@code RPUSH} + {@code PEXPIRE} of the fence into the waiter's inbox) and no notice, where
     * lock-redis's grant runs seven ({@code GETDEL} of the first waiter's entry besides the {@code LPOP}:
     * a dead waiter's entry is gone, so it is skipped) and publishes only to a waiter that waits for
     * notices. The waiter blocks in {@code BLPOP} on its inbox (100 ms, then asks again).
     */
    static final class MinimalTwoHopLock implements HandoffLock {
        private static final String ACQUIRE =
                """
                local holder = redis.call('GET', KEYS[1])
                if holder == ARGV[1] then
                  return {1, tonumber(redis.call('GET', KEYS[2]))}
                end
                if holder == false and redis.call('LLEN', KEYS[3]) == 0 then
                  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
                  return {1, redis.call('INCR', KEYS[2])}
                end
                if not redis.call('LPOS', KEYS[3], ARGV[1]) then
                  redis.call('RPUSH', KEYS[3], ARGV[1])
                end
                return {0}
                """;
        private static final String RELEASE =
                """
                if redis.call('GET', KEYS[1]) ~= ARGV[1] then
                  return 0
                end
                local next = redis.call('LPOP', KEYS[3])
                if next then
                  redis.call('SET', KEYS[1], next, 'PX', ARGV[2])
                  local fence = redis.call('INCR', KEYS[2])
                  local inbox = KEYS[1] .. ':grant:' .. next
                  redis.call('RPUSH', inbox, fence)
                  redis.call('PEXPIRE', inbox, 5000)
                else
                  redis.call('DEL', KEYS[1])
                end
                return 1
                """;
        private final JedisPooled jedis;
        private final String acquireSha;
        private final String releaseSha;
        private final List<String> keys = RawFloors.redisKeys("min:{" + NAME + "}");

        MinimalTwoHopLock(HostAndPort address) {
            jedis = new JedisPooled(address);
            acquireSha = jedis.scriptLoad(ACQUIRE, NAME);
            releaseSha = jedis.scriptLoad(RELEASE, NAME);
        }

        @Override
        public Runnable acquire() {
            String token = UUID.randomUUID().toString().replace("-", "");
            List<String> args = List.of(token, "30000");
            while (true) {
                List<?> reply = (List<?>) jedis.evalsha(acquireSha, keys, args);
                if ((Long) reply.get(0) == 1) {
                    break;
                }
                if (jedis.blpop(0.1, keys.get(0) + ":grant:" + token) != null) {
                    break;
                }
            }
            return () -> {
                Object released = jedis.evalsha(releaseSha, keys, List.of(token, "30000"));
                if ((Long) released != 1) {
                    throw new IllegalStateException("release of '" + NAME + "' freed nothing");
                }
            };
        }

        @Override
        public void close() {
            jedis.close();
        }
    }
}
