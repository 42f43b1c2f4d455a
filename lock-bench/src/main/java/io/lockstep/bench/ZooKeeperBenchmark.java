package io.lockstep.bench;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.tck.servers.ZooKeeperServer;
import io.lockstep.zookeeper.ZooKeeperLockProvider;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.retry.RetryNTimes;
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
 * ZooKeeper locks on one real server in a child JVM (lock-tck's {@link ZooKeeperServer}, fsync on as
 * shipped), all clients in this JVM on loopback:
 *
 * <ul>
 *   <li>{@code lockstep}: lock-zookeeper;
 *   <li>{@code curator-semaphore-mutex}: Curator {@code InterProcessSemaphoreMutex} (not bound to a
 *       thread, as a Lockstep lease);
 *   <li>{@code curator-mutex}: Curator {@code InterProcessMutex} (re-entrant, bound to its thread).
 * </ul>
 *
 * <p>{@link #acquireRelease}: one uncontended acquire and release of the same lock ({@code
 * names=same}) or of a lock never used before ({@code names=fresh}, where Curator first creates the
 * parent). {@link Handoff#handoff}: the holder releases while another client waits; the time until the
 * waiter holds the lock (notified by a watch, no polling).
 *
 * <p>Compare within one run only.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 4, time = 2)
public class ZooKeeperBenchmark {

    private static final LeaseOptions LEASE = LeaseOptions.of(Duration.ofSeconds(20));

    /** One server and the client under test. */
    @State(Scope.Benchmark)
    public static class Uncontended {
        /** Which lock to measure. */
        @Param({"lockstep", "curator-semaphore-mutex", "curator-mutex"})
        public String lock = "lockstep";

        /** The same lock name each time, or a new one. */
        @Param({"same", "fresh"})
        public String names = "same";

        private @Nullable ZooKeeperServer server;
        private @Nullable CuratorFramework curator;
        private @Nullable LockProvider provider;
        private @Nullable InterProcessLock sameLock;
        private long counter;

        /** Starts the server and the client. */
        @Setup(Level.Trial)
        public void start() throws Exception {
            server = ZooKeeperServer.start();
            curator = curator(server);
            provider = ZooKeeperLockProvider.builder(curator).build();
            sameLock = newCuratorLock("/curator/same");
        }

        /** Stops the client and the server. */
        @TearDown(Level.Trial)
        public void stop() {
            if (provider != null) {
                provider.close();
            }
            if (curator != null) {
                curator.close();
            }
            if (server != null) {
                server.close();
            }
        }

        @Nullable
        InterProcessLock newCuratorLock(String path) {
            return switch (lock) {
                case "curator-semaphore-mutex" -> new InterProcessSemaphoreMutex(curator, path);
                case "curator-mutex" -> new InterProcessMutex(curator, path);
                default -> null;
            };
        }
    }

    /** Takes a free lock and releases it. */
    @Benchmark
    public boolean acquireRelease(Uncontended s) throws Exception {
        boolean fresh = s.names.equals("fresh");
        String name = fresh ? "fresh-" + (s.counter++) : "same";
        if (s.lock.equals("lockstep")) {
            Lease lease = s.provider.tryAcquire(name, LEASE).orElseThrow();
            return lease.release();
        }
        InterProcessLock lock = fresh ? s.newCuratorLock("/curator/" + name) : s.sameLock;
        if (!lock.acquire(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("lock was not free");
        }
        lock.release();
        return true;
    }

    /** A holder and a waiter on separate clients; each invocation hands the lock over once. */
    @State(Scope.Benchmark)
    public static class Handoff {
        /** Which lock to measure. */
        @Param({"lockstep", "curator-mutex"})
        public String lock = "lockstep";

        private @Nullable ZooKeeperServer server;
        private @Nullable CuratorFramework holderClient;
        private @Nullable CuratorFramework waiterClient;
        private @Nullable LockProvider holder;
        private @Nullable LockProvider waiter;
        private @Nullable InterProcessMutex holderMutex;
        private @Nullable Lease held;
        private final SynchronousQueue<Boolean> go = new SynchronousQueue<>();
        private final BlockingQueue<Long> acquiredAt = new ArrayBlockingQueue<>(1);
        private final SynchronousQueue<Boolean> released = new SynchronousQueue<>();
        private @Nullable Thread waiterThread;
        private volatile boolean stop;
        private long releasedAt;

        /** Starts the server, both clients and the waiter's thread. */
        @Setup(Level.Trial)
        public void start() throws Exception {
            server = ZooKeeperServer.start();
            holderClient = curator(server);
            waiterClient = curator(server);
            holder = ZooKeeperLockProvider.builder(holderClient).build();
            waiter = ZooKeeperLockProvider.builder(waiterClient).build();
            holderMutex = new InterProcessMutex(holderClient, "/curator/handoff");
            InterProcessMutex waiterMutex = new InterProcessMutex(waiterClient, "/curator/handoff");
            waiterThread = new Thread(
                    () -> {
                        try {
                            while (!stop) {
                                if (go.poll(1, TimeUnit.SECONDS) == null) {
                                    continue;
                                }
                                if (lock.equals("lockstep")) {
                                    Lease lease = waiter.acquire("handoff", LEASE.withWaitTime(Duration.ofSeconds(10)));
                                    acquiredAt.put(System.nanoTime());
                                    released.take();
                                    lease.release();
                                } else {
                                    waiterMutex.acquire();
                                    acquiredAt.put(System.nanoTime());
                                    released.take();
                                    waiterMutex.release();
                                }
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    "handoff-waiter");
            waiterThread.setDaemon(true);
            waiterThread.start();
        }

        /** The holder takes the lock and the waiter queues behind it (not timed). */
        @Setup(Level.Invocation)
        public void holdAndQueue() throws Exception {
            if (lock.equals("lockstep")) {
                // The waiter may still be releasing the previous round's lease.
                held = holder.acquire("handoff", LEASE.withWaitTime(Duration.ofSeconds(10)));
            } else {
                holderMutex.acquire();
            }
            go.put(true);
            // Wait until the waiter's node is queued behind the holder's.
            String parent = lock.equals("lockstep") ? "/lockstep/handoff" : "/curator/handoff";
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (holderClient.getChildren().forPath(parent).size() < 2) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("waiter did not queue");
                }
                Thread.onSpinWait();
            }
        }

        /** The waiter gives the lock back (not timed). */
        @TearDown(Level.Invocation)
        public void giveBack() throws InterruptedException {
            released.put(true);
        }

        /** Stops the waiter, the clients and the server. */
        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            stop = true;
            if (waiterThread != null) {
                waiterThread.join(5_000);
            }
            holder.close();
            waiter.close();
            holderClient.close();
            waiterClient.close();
            server.close();
        }
    }

    /** The holder releases; returns once the waiter holds the lock. */
    @Benchmark
    @Warmup(iterations = 2, time = 2)
    @Measurement(iterations = 3, time = 3)
    public long handoff(Handoff h) throws Exception {
        h.releasedAt = System.nanoTime();
        if (h.lock.equals("lockstep")) {
            h.held.release();
        } else {
            h.holderMutex.release();
        }
        return h.acquiredAt.take() - h.releasedAt;
    }

    private static CuratorFramework curator(ZooKeeperServer server) throws InterruptedException {
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(server.connectString())
                .sessionTimeoutMs(30_000)
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryNTimes(0, 0))
                .build();
        curator.start();
        if (!curator.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no connection to " + server.connectString());
        }
        return curator;
    }
}
