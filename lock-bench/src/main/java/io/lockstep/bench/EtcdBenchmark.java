package io.lockstep.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.spi.HolderText;
import io.lockstep.tck.servers.EtcdServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
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

/**
 * lock-etcd against the raw jetcd floor and against jetcd's own {@code Lock} client, on an etcd member
 * the benchmark starts on loopback.
 *
 * <ul>
 *   <li>{@code acquireRelease} with {@code jetcd-floor}: raw jetcd sending exactly lock-etcd's
 *       transactions, with keys and values of the same shape and length: one to queue a key on a session
 *       lease if neither it nor the attempt's tombstone exists (lock-etcd's fence against a late
 *       acquire) and read its two newest keys (names only: ours, and the one before it if the lock is
 *       taken; until 2026-11-30 the queue's head as well, which the newest two already tell), one compare-and-delete
 *       to release; {@code etcd}: lock-etcd; {@code jetcd-lock}: jetcd's
 *       {@code Lock.lock(name, lease)} and {@code unlock(key)} (etcd's lock service). The floor, like
 *       lock-etcd and etcd's lock service, puts the same key on every acquire. Not in the default run,
 *       {@code -p backend=jetcd-floor-new-key}: the floor with a new key on every acquire, as lock-etcd
 *       did before issue 27; every deleted key stays in the index the queue head's range walks until
 *       etcd compacts, so it slows down as the trial goes on. {@code -p backend=jetcd-floor-plain-delete}:
 *       the floor releasing with a plain delete, as etcd's lock service's {@code Unlock} does, rather
 *       than the compare-and-delete that leaves a new holder's key alone. Not in the default run either,
 *       {@code -p backend=turns} ({@link Turns}): the floor, {@code Lock} and lock-etcd taking turns by
 *       iteration in one trial, each cycle's ratios seconds apart, each contender's messages and CPU
 *       (etcd's and this process's) summed over its own turns.
 *   <li>{@code handoff}: a second client already queued behind the holder; the time from the holder's
 *       release until the waiter holds the lock (release round trip, the watch notification, the
 *       waiter's acquire round trip), for lock-etcd ({@code etcd}) and jetcd's {@code Lock} client.
 * </ul>
 *
 * <p>With {@code -t 8} every thread takes a lock of its own ({@link Caller}). Every trial reads etcd's
 * gRPC message counters ({@link EtcdCounters}) before and after and divides by the operations it counted;
 * an {@code acquireRelease} trial fails unless that is two {@code Txn} per operation ({@code jetcd-floor},
 * {@code etcd}) or one {@code Lock} and one {@code Unlock} ({@code jetcd-lock}).
 *
 * <p>etcd runs with its default durability, its data directory on disk ({@link EtcdServer#startOnDisk()}):
 * each write waits for its log's fsync, as on a user's member. Until 2026-11-30 it ran in {@code /dev/shm},
 * where an fsync costs nothing, like the tests' members. Each trial also prints etcd's own work per
 * measured operation (log fsyncs, their mean time, the member's CPU), read from its metrics, and this
 * process's ({@link ClientWork}: its CPU per operation and how long the JIT compiled while it was measured).
 * Compare within one run only.
 *
 * <p>Warm it up for a minute ({@code -wi 60 -w 1}, as {@code scripts/bench} does): jetcd's gRPC, Netty and
 * protobuf paths are a lot of code for C2, and at 1,000 to 2,000 operations a second its methods reach the
 * compile thresholds slowly. On 2 cores, with 8 threads and ten 1 s warm-ups, the JIT compiled for more than
 * 5 s of each 5 s measurement (2026-11-30): a core taken from etcd and the client alike, and the time per
 * operation still falling, from 28 ms in the second warm-up to about 4.5 ms from the 35th on.
 */
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class EtcdBenchmark {

    /** The queue's head, name and revisions only (lock-etcd's acquire reads it so when its key was queued already). */
    private static final GetOption HEAD_KEY = GetOption.builder()
            .isPrefix(true)
            .withKeysOnly(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .withLimit(1)
            .build();

    /** The two newest keys (lock-etcd's acquire reads them so a waiter learns its predecessor). */
    private static final GetOption NEWEST_TWO = GetOption.builder()
            .isPrefix(true)
            .withKeysOnly(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.DESCEND)
            .withLimit(2)
            .build();

    /** A provider id as long as lock-etcd's (16 hex digits). */
    private static final String FLOOR_PROVIDER = "0123456789abcdef";

    /** What lock-etcd writes after the owner token: this process's holder text. */
    private static final String FLOOR_HOLDER = HolderText.encode(io.lockstep.Holder.thisProcess(null));

    private static byte[] longBytes(long n) {
        byte[] out = new byte[8];
        for (int i = 7; i >= 0; i--) {
            out[i] = (byte) n;
            n >>>= 8;
        }
        return out;
    }

    /** What each contender must be seen to send per acquire + release: gRPC messages per method. */
    static Map<String, Double> expected(String backend) {
        return switch (backend) {
            case "jetcd-floor", "jetcd-floor-new-key", "etcd" -> Map.of("Txn", 2.0);
            case "jetcd-floor-plain-delete" -> Map.of("Txn", 1.0, "DeleteRange", 1.0);
            case "jetcd-lock" -> Map.of("Lock", 1.0, "Unlock", 1.0);
            default -> throw new IllegalArgumentException("backend " + backend);
        };
    }

    /** One etcd member and the contender under test; every benchmark thread takes a lock of its own. */
    @State(Scope.Benchmark)
    public static class Uncontended {
        /** What {@code acquireRelease} measures. */
        @Param({"jetcd-floor", "etcd", "jetcd-lock"})
        public String backend = "etcd";

        private final LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30));
        private final LongAdder operations = new LongAdder();
        private @Nullable EtcdServer etcd;
        private @Nullable Client raw;
        private @Nullable LockProvider locks;
        private long sessionLease;
        private Map<String, Long> before = Map.of();
        private double[] workBefore = new double[3];
        private ClientWork clientBefore = ClientWork.now();
        private long measuredFrom = -1;
        /** The contender the benchmark threads run now: {@link #backend}, or with {@code turns} the one whose turn it is. */
        volatile String current = "";

        private final Turns turns = new Turns();

        /** Starts etcd and the clients. */
        @Setup(Level.Trial)
        public void start() throws Exception {
            etcd = EtcdServer.startOnDisk();
            raw = Client.builder().endpoints(etcd.endpoint()).build();
            sessionLease = keptAliveLease(raw);
            locks = Locks.open(etcd.uri());
            // The first operation opens the provider's session (a lease grant and its keep-alive stream).
            Lease first = locks.tryAcquire("bench-prime", options).orElseThrow();
            first.release();
            before = EtcdCounters.received(etcd.endpoint());
            current = backend.equals(Turns.NAME) ? Turns.CONTENDERS.get(0) : backend;
        }

        /**
         * At the first measured iteration: reads etcd's and this process's work so far, so the trial reports
         * both per measured operation, the warm-up's JIT compiling left out.
         */
        @Setup(Level.Iteration)
        public void iteration(IterationParams params) {
            if (backend.equals(Turns.NAME)) {
                current = turns.begin(params, etcd.endpoint(), operations.sum());
            }
            if (params.getType() == IterationType.MEASUREMENT && measuredFrom < 0) {
                measuredFrom = operations.sum();
                workBefore = EtcdCounters.work(etcd.endpoint());
                clientBefore = ClientWork.now();
            }
        }

        /** With {@code turns}: what the iteration's contender did in it. */
        @TearDown(Level.Iteration)
        public void iterationDone(IterationParams params, BenchmarkParams benchmark) {
            if (backend.equals(Turns.NAME)) {
                turns.end(params, etcd.endpoint(), operations.sum(), benchmark.getThreads());
            }
        }

        /** Checks the requests etcd saw per operation, records them for the report, stops everything. */
        @TearDown(Level.Trial)
        public void stop(BenchmarkParams params) {
            try {
                if (backend.equals(Turns.NAME)) {
                    System.out.print(turns.report());
                    List<String> problems = new ArrayList<>();
                    for (String contender : Turns.CONTENDERS) {
                        problems.addAll(problems(contender, turns.messagesPerOperation(contender)));
                    }
                    if (!problems.isEmpty()) {
                        throw new IllegalStateException(
                                "EtcdBenchmark turns are not what their names say: " + String.join("; ", problems));
                    }
                    return;
                }
                long ops = operations.sum();
                Map<String, Double> perOp =
                        EtcdCounters.perOperation(before, EtcdCounters.received(etcd.endpoint()), ops);
                System.out.printf("%netcd gRPC messages per operation, %s (%d operations): %s%n", backend, ops, perOp);
                long measured = ops - measuredFrom;
                System.out.printf(
                        "etcd's own work per measured operation, %s: %s%n",
                        backend, EtcdCounters.describeWork(workBefore, EtcdCounters.work(etcd.endpoint()), measured));
                System.out.printf(
                        "this process's work in the measured iterations, %s: %s%n",
                        backend, ClientWork.now().since(clientBefore, measured));
                List<String> problems = problems(backend, perOp);
                if (!problems.isEmpty()) {
                    throw new IllegalStateException(
                            "EtcdBenchmark " + backend + " is not what its name says: " + String.join("; ", problems));
                }
                CommandMix.recordSeen(params, ops, EtcdCounters.version(etcd.endpoint()), perOp);
            } finally {
                if (locks != null) {
                    locks.close();
                }
                if (raw != null) {
                    raw.close();
                }
                if (etcd != null) {
                    etcd.close();
                }
            }
        }
    }

    /** How the gRPC messages etcd saw per operation differ from what {@code backend} must send; empty if not. */
    static List<String> problems(String backend, Map<String, Double> perOp) {
        List<String> problems = new ArrayList<>();
        expected(backend).forEach((method, n) -> {
            double seen = perOp.getOrDefault(method, 0.0);
            if (Math.abs(seen - n) > 0.02 * n + 0.01) {
                problems.add(backend + ": " + method + " " + seen + " per operation, expected " + n);
            }
        });
        perOp.forEach((method, n) -> {
            // The session's keep-alives are a few per trial, far below 0.01 per operation.
            if (!expected(backend).containsKey(method) && n >= 0.01) {
                problems.add(backend + ": " + method + " " + n + " per operation, not expected at all");
            }
        });
        return problems;
    }

    /** One uncontended acquire and release, on a lock of this thread's own. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Object acquireRelease(Uncontended s, Caller caller) throws Exception {
        s.operations.increment();
        switch (s.current) {
            case "jetcd-floor", "jetcd-floor-new-key", "jetcd-floor-plain-delete" -> {
                // lock-etcd's layout: <prefix>#<encoded name>/<provider>.<slot>, the tombstone <prefix>#<name>#<token>.
                String lock = "floor#" + caller.name.replace("/", "%2F");
                ByteSequence prefix = bytes(lock + "/");
                // The same key every time (as lock-etcd's slot, and jetcd's Lock keyed by lease) leaves no
                // deleted key behind; a fresh key per acquire leaves one in the prefix's index each time,
                // which the head's sorted range walks until etcd compacts.
                ByteSequence key = bytes(lock + "/"
                        + (s.current.equals("jetcd-floor-new-key") ? UUID.randomUUID() : FLOOR_PROVIDER + ".0"));
                // An owner token as long as lock-etcd's (32 hex digits), from a cheap source: the floor's client
                // costs are the raw client's alone.
                String token = HexFormat.of().formatHex(longBytes(caller.floorOps++)) + FLOOR_PROVIDER;
                TxnResponse queued = s.raw.getKVClient()
                        .txn()
                        .If(
                                new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)),
                                new Cmp(bytes(lock + "#" + token), Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(
                                Op.put(
                                        key,
                                        bytes(token + " " + FLOOR_HOLDER),
                                        PutOption.builder()
                                                .withLeaseId(s.sessionLease)
                                                .build()),
                                Op.get(prefix, NEWEST_TWO))
                        .Else(Op.get(key, GetOption.DEFAULT), Op.get(prefix, HEAD_KEY))
                        .commit()
                        .get();
                long revision = queued.getHeader().getRevision();
                // Ours is the newest key; no key before it means ours heads the queue.
                if (!queued.isSucceeded()
                        || queued.getGetResponses().get(0).getKvs().size() != 1) {
                    throw new IllegalStateException("the floor's lock was not free");
                }
                if (s.current.equals("jetcd-floor-plain-delete")) {
                    return s.raw.getKVClient().delete(key).get(); // as etcd's lock service's Unlock
                }
                return s.raw.getKVClient()
                        .txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                        .Then(Op.delete(key, DeleteOption.DEFAULT))
                        .commit()
                        .get();
            }
            case "etcd" -> {
                Lease lease = s.locks.tryAcquire(caller.name, s.options).orElseThrow();
                return lease.release();
            }
            case "jetcd-lock" -> {
                ByteSequence key = s.raw.getLockClient()
                        .lock(bytes("jetcd-lock/" + caller.name), s.sessionLease)
                        .get()
                        .getKey();
                return s.raw.getLockClient().unlock(key).get();
            }
            default -> throw new IllegalArgumentException("backend " + s.current);
        }
    }

    /** The handoff's own state, so its per-invocation setup never runs around {@code acquireRelease}. */
    @State(Scope.Benchmark)
    public static class Handoff {
        /** Whose handoff: lock-etcd's ({@code etcd}) or jetcd's {@code Lock} client's ({@code jetcd-lock}). */
        @Param({"etcd", "jetcd-lock"})
        public String backend = "etcd";

        private final LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30));
        private final String lockName = "handoff-" + UUID.randomUUID();
        private final ExecutorService waiterThread = Executors.newSingleThreadExecutor();
        private @Nullable EtcdServer etcd;
        private @Nullable Client raw;
        private @Nullable Client rawWaiter;
        private @Nullable LockProvider holder;
        private @Nullable LockProvider waiter;
        private long holderLease;
        private long waiterLease;
        private @Nullable Lease held;
        private @Nullable ByteSequence heldKey;
        private @Nullable Future<?> waiting;
        private @Nullable Object handedOver;
        private long handoffs;
        private Map<String, Long> before = Map.of();

        /** Starts etcd and two clients. */
        @Setup(Level.Trial)
        public void start() throws Exception {
            etcd = EtcdServer.startOnDisk();
            raw = Client.builder().endpoints(etcd.endpoint()).build();
            rawWaiter = Client.builder().endpoints(etcd.endpoint()).build();
            holderLease = keptAliveLease(raw);
            waiterLease = keptAliveLease(rawWaiter);
            holder = Locks.open(etcd.uri());
            waiter = Locks.open(etcd.uri());
            before = EtcdCounters.received(etcd.endpoint());
        }

        /** Before each handoff: the holder holds and the waiter has queued behind it. */
        @Setup(Level.Invocation)
        public void queueAWaiter() throws Exception {
            ByteSequence queue;
            if (backend.equals("etcd")) {
                held = holder.tryAcquire(lockName, options).orElseThrow();
                waiting = waiterThread.submit(
                        () -> waiter.acquire(lockName, options.withWaitTime(Duration.ofSeconds(10))));
                queue = bytes("lockstep/#" + lockName + "/"); // lock-etcd's key layout: <keyPrefix>#<name>/<token>
            } else {
                ByteSequence name = bytes("jetcd/" + lockName);
                heldKey = raw.getLockClient()
                        .lock(name, holderLease)
                        .get(10, TimeUnit.SECONDS)
                        .getKey();
                waiting = waiterThread.submit(() -> rawWaiter
                        .getLockClient()
                        .lock(name, waiterLease)
                        .get(10, TimeUnit.SECONDS)
                        .getKey());
                queue = bytes("jetcd/" + lockName + "/");
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (raw.getKVClient()
                            .get(
                                    queue,
                                    GetOption.builder()
                                            .isPrefix(true)
                                            .withCountOnly(true)
                                            .build())
                            .get()
                            .getCount()
                    < 2) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the waiter did not queue under " + queue);
                }
                Thread.onSpinWait();
            }
            // The waiter's key exists; give it the moment it needs to look up its predecessor and open
            // its watch, so the figure is a handoff to a waiter already watching (a release that races
            // the watch's creation is delivered by etcd's catch-up loop, every 100 ms).
            Thread.sleep(10);
        }

        /** After each handoff: the waiter lets go. */
        @TearDown(Level.Invocation)
        public void releaseTheWaiter() throws Exception {
            handoffs++;
            if (handedOver instanceof Lease lease) {
                lease.release();
            } else if (handedOver instanceof ByteSequence key) {
                rawWaiter.getLockClient().unlock(key).get(10, TimeUnit.SECONDS);
            }
            handedOver = null;
        }

        /** Records the gRPC messages etcd saw per handoff (with its set-up), then stops everything. */
        @TearDown(Level.Trial)
        public void stop(BenchmarkParams params) {
            try {
                if (handoffs > 0) {
                    Map<String, Double> perHandoff =
                            EtcdCounters.perOperation(before, EtcdCounters.received(etcd.endpoint()), handoffs);
                    perHandoff.remove("Range"); // the set-up's polling for the queued waiter
                    System.out.printf("%netcd gRPC messages per handoff, %s: %s%n", backend, perHandoff);
                    CommandMix.recordSeen(params, handoffs, EtcdCounters.version(etcd.endpoint()), perHandoff);
                }
            } finally {
                waiterThread.shutdownNow();
                if (holder != null) {
                    holder.close();
                }
                if (waiter != null) {
                    waiter.close();
                }
                if (raw != null) {
                    raw.close();
                }
                if (rawWaiter != null) {
                    rawWaiter.close();
                }
                if (etcd != null) {
                    etcd.close();
                }
            }
        }
    }

    /** Release by one client until the waiter queued on another client holds the lock. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Object handoff(Handoff h) throws Exception {
        if (h.backend.equals("etcd")) {
            h.held.release();
        } else {
            h.raw.getLockClient().unlock(h.heldKey).get(10, TimeUnit.SECONDS);
        }
        h.handedOver = h.waiting.get(10, TimeUnit.SECONDS);
        return h.handedOver;
    }

    /**
     * A 60 s etcd lease that {@code client} keeps alive until it closes, for jetcd's {@code Lock} and the
     * floor: a trial (a minute of warm-up and its measured iterations) outlives a lease left to its TTL.
     */
    private static long keptAliveLease(Client client) throws Exception {
        long id = client.getLeaseClient().grant(60).get().getID();
        client.getLeaseClient().keepAlive(id, new io.grpc.stub.StreamObserver<>() {
            @Override
            public void onNext(io.etcd.jetcd.lease.LeaseKeepAliveResponse value) {}

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
        });
        return id;
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
