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
import io.lockstep.tck.servers.EtcdServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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

/**
 * lock-etcd against the raw jetcd floor and against jetcd's own {@code Lock} client, on an etcd member
 * the benchmark starts on loopback.
 *
 * <ul>
 *   <li>{@code acquireRelease} with {@code jetcd-floor}: raw jetcd doing exactly lock-etcd's round
 *       trips, one transaction to queue a key on a session lease and read the queue's head, one
 *       compare-and-delete transaction to release; {@code etcd}: lock-etcd; {@code jetcd-lock}: jetcd's
 *       {@code Lock.lock(name, lease)} and {@code unlock(key)} (etcd's lock service).
 *   <li>{@code handoff}: a second client already queued behind the holder; the time from the holder's
 *       release until the waiter holds the lock (release round trip, the watch notification, the
 *       waiter's acquire round trip).
 * </ul>
 *
 * <p>Each etcd write waits for an fsync: compare within one run only.
 */
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class EtcdBenchmark {

    /** What {@code acquireRelease} measures. */
    @Param({"jetcd-floor", "etcd", "jetcd-lock"})
    public String backend = "etcd";

    private static final GetOption FIRST = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .withLimit(1)
            .build();

    private final LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30));
    private @Nullable EtcdServer etcd;
    private @Nullable Client raw;
    private @Nullable LockProvider locks;
    private long sessionLease;
    private final ByteSequence prefix = bytes("floor/bench/");
    private final ByteSequence name = bytes("jetcd-lock-bench");
    private final String lockName = "bench-" + UUID.randomUUID();

    /** Starts etcd and the clients. */
    @Setup(Level.Trial)
    public void start() throws Exception {
        etcd = EtcdServer.start();
        raw = Client.builder().endpoints(etcd.endpoint()).build();
        sessionLease = raw.getLeaseClient().grant(60).get().getID();
        raw.getLeaseClient().keepAlive(sessionLease, new io.grpc.stub.StreamObserver<>() {
            @Override
            public void onNext(io.etcd.jetcd.lease.LeaseKeepAliveResponse value) {}

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
        });
        locks = Locks.open(etcd.uri());
    }

    /** Stops everything. */
    @TearDown(Level.Trial)
    public void stop() {
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

    /** One uncontended acquire and release. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Object acquireRelease() throws Exception {
        switch (backend) {
            case "jetcd-floor" -> {
                ByteSequence key = bytes("floor/bench/" + UUID.randomUUID());
                TxnResponse queued = raw.getKVClient()
                        .txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(
                                Op.put(
                                        key,
                                        key,
                                        PutOption.builder()
                                                .withLeaseId(sessionLease)
                                                .build()),
                                Op.get(prefix, FIRST))
                        .commit()
                        .get();
                long revision = queued.getHeader().getRevision();
                if (!queued.getGetResponses().get(0).getKvs().get(0).getKey().equals(key)) {
                    throw new IllegalStateException("the floor's lock was not free");
                }
                return raw.getKVClient()
                        .txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                        .Then(Op.delete(key, DeleteOption.DEFAULT))
                        .commit()
                        .get();
            }
            case "etcd" -> {
                Lease lease = locks.tryAcquire(lockName, options).orElseThrow();
                return lease.release();
            }
            case "jetcd-lock" -> {
                ByteSequence key =
                        raw.getLockClient().lock(name, sessionLease).get().getKey();
                return raw.getLockClient().unlock(key).get();
            }
            default -> throw new IllegalArgumentException("backend " + backend);
        }
    }

    /** The handoff's own state, so its per-invocation setup never runs around {@code acquireRelease}. */
    @State(Scope.Benchmark)
    public static class Handoff {
        private final LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30));
        private final String lockName = "handoff-" + UUID.randomUUID();
        private final ExecutorService waiterThread = Executors.newSingleThreadExecutor();
        private @Nullable EtcdServer etcd;
        private @Nullable Client raw;
        private @Nullable LockProvider holder;
        private @Nullable LockProvider waiter;
        private @Nullable Lease held;
        private @Nullable Future<Lease> waiting;
        private @Nullable Lease handedOver;

        /** Starts etcd and two clients. */
        @Setup(Level.Trial)
        public void start() {
            etcd = EtcdServer.start();
            raw = Client.builder().endpoints(etcd.endpoint()).build();
            holder = Locks.open(etcd.uri());
            waiter = Locks.open(etcd.uri());
        }

        /** Before each handoff: the holder holds and the waiter has queued behind it. */
        @Setup(Level.Invocation)
        public void queueAWaiter() throws Exception {
            held = holder.tryAcquire(lockName, options).orElseThrow();
            waiting = waiterThread.submit(() -> waiter.acquire(lockName, options.withWaitTime(Duration.ofSeconds(10))));
            ByteSequence queue = bytes("lockstep/" + lockName + "/");
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
                Thread.onSpinWait();
            }
            // The waiter's key exists; give it the moment it needs to look up its predecessor and open
            // its watch, so the figure is a handoff to a waiter already watching (a release that races
            // the watch's creation is delivered by etcd's catch-up loop, every 100 ms).
            Thread.sleep(10);
        }

        /** After each handoff: the waiter lets go. */
        @TearDown(Level.Invocation)
        public void releaseTheWaiter() {
            if (handedOver != null) {
                handedOver.release();
                handedOver = null;
            }
        }

        /** Stops everything. */
        @TearDown(Level.Trial)
        public void stop() {
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
            if (etcd != null) {
                etcd.close();
            }
        }
    }

    /** Release by one client until the waiter queued on another client holds the lock. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Object handoff(Handoff h) throws Exception {
        h.held.release();
        h.handedOver = h.waiting.get(10, TimeUnit.SECONDS);
        return h.handedOver;
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
