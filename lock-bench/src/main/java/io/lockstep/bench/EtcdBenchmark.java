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
    private @Nullable LockProvider waiterLocks;
    private long sessionLease;
    private final ByteSequence prefix = bytes("floor/bench/");
    private final ByteSequence name = bytes("jetcd-lock-bench");
    private final String lockName = "bench-" + UUID.randomUUID();
    private final ExecutorService waiterThread = Executors.newSingleThreadExecutor();
    private @Nullable Lease held;
    private @Nullable Future<Lease> waiting;
    private @Nullable Lease handedOver;

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
        waiterLocks = Locks.open(etcd.uri());
    }

    /** Stops everything. */
    @TearDown(Level.Trial)
    public void stop() {
        waiterThread.shutdownNow();
        if (locks != null) {
            locks.close();
        }
        if (waiterLocks != null) {
            waiterLocks.close();
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

    /** Before each handoff: the holder holds and the waiter has queued behind it. */
    @Setup(Level.Invocation)
    public void queueAWaiter() throws Exception {
        if (!"etcd".equals(backend)) {
            return;
        }
        held = locks.tryAcquire(lockName, options).orElseThrow();
        waiting =
                waiterThread.submit(() -> waiterLocks.acquire(lockName, options.withWaitTime(Duration.ofSeconds(10))));
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
    }

    /** After each handoff: the waiter lets go. */
    @TearDown(Level.Invocation)
    public void releaseTheWaiter() {
        if (handedOver != null) {
            handedOver.release();
            handedOver = null;
        }
    }

    /** Release by one client until the queued waiter on another client holds the lock. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Object handoff() throws Exception {
        if (!"etcd".equals(backend)) {
            return null; // only lock-etcd queues waiters; the other params skip this
        }
        held.release();
        handedOver = waiting.get(10, TimeUnit.SECONDS);
        return handedOver;
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
