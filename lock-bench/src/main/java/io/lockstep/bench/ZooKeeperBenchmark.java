package io.lockstep.bench;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.tck.servers.ZooKeeperServer;
import io.lockstep.zookeeper.ZooKeeperLockProvider;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
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

/**
 * ZooKeeper locks on one real server in a child JVM (lock-tck's {@link ZooKeeperServer}, fsync on as
 * shipped), all clients in this JVM on loopback:
 *
 * <ul>
 *   <li>{@code floor}: the raw ZooKeeper client doing lock-zookeeper's requests and nothing else: the
 *       parent container (for a fresh name), an ephemeral sequential node and the queue's listing sent
 *       back to back (one round trip), then a delete;
 *   <li>{@code lockstep}: lock-zookeeper;
 *   <li>{@code curator-semaphore-mutex}: Curator {@code InterProcessSemaphoreMutex} (not bound to a
 *       thread, as a Lockstep lease);
 *   <li>{@code curator-mutex}: Curator {@code InterProcessMutex} (re-entrant, bound to its thread).
 * </ul>
 *
 * <p>{@link #acquireRelease}: one uncontended acquire and release of the same lock ({@code
 * names=same}) or of a lock never used before ({@code names=fresh}, where Curator first creates the
 * parent). {@link Handoff#handoff}: the holder releases while another client waits; the time until the
 * waiter holds the lock. Each round starts only once the server lists the waiter's watch on the
 * holder's node ({@code wchp}), so the release reaches the waiter as a notification.
 *
 * <p>Every {@code acquireRelease} trial reads the server's {@code zk_packets_received} ({@code mntr})
 * before and after and prints the requests per operation; a {@code floor} or {@code lockstep} trial
 * fails unless they are the ones named above (3 per operation for the same name, 4 for a fresh one,
 * plus a little for the parent the server reaps between operations and the client's pings).
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
        @Param({"floor", "lockstep", "curator-semaphore-mutex", "curator-mutex"})
        public String lock = "lockstep";

        /** The same lock name each time, or a new one. */
        @Param({"same", "fresh"})
        public String names = "same";

        private @Nullable ZooKeeperServer server;
        private @Nullable CuratorFramework curator;
        private @Nullable LockProvider provider;
        private final Map<String, InterProcessLock> sameLocks = new ConcurrentHashMap<>();
        private final LongAdder ops = new LongAdder();
        private long packetsAtStart;
        private final Set<String> floorParents = ConcurrentHashMap.newKeySet();

        /** Starts the server and the client. */
        @Setup(Level.Trial)
        public void start() throws Exception {
            server = ZooKeeperServer.start();
            curator = curator(server);
            provider = ZooKeeperLockProvider.builder(curator).build();
            curator.create().creatingParentContainersIfNeeded().forPath("/floor/warm");
            packetsAtStart = packetsReceived(server);
        }

        /** Checks the requests per operation, then stops the client and the server. */
        @TearDown(Level.Trial)
        public void stop(BenchmarkParams params) {
            long ops = this.ops.sum();
            if (server != null && ops > 0) {
                double perOp = (packetsReceived(server) - packetsAtStart) / (double) ops;
                System.out.printf(
                        "%nZooKeeper requests per operation, %s names=%s: %.3f over %d operations%n",
                        lock, names, perOp, ops);
                double expected = names.equals("fresh") ? 4 : 3;
                if ((lock.equals("floor") || lock.equals("lockstep")) && (perOp < expected || perOp > expected + 0.1)) {
                    stopAll();
                    throw new IllegalStateException(String.format(
                            "%s names=%s sent %.3f requests per operation to the server, not %.0f: it does not do"
                                    + " what its name says",
                            lock, names, perOp, expected));
                }
                CommandMix.recordSeen(params, ops, version(server), Map.of("requests", perOp));
            }
            stopAll();
        }

        private void stopAll() {
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
    public boolean acquireRelease(Uncontended s, Caller caller) throws Exception {
        boolean fresh = s.names.equals("fresh");
        String own = caller.name.replace('/', '-');
        // Caller.fence is this thread's own counter here: each fresh name is used once.
        String name = fresh ? "fresh-" + own + "-" + (caller.fence++) : "same-" + own;
        s.ops.increment();
        if (s.lock.equals("floor")) {
            return floorAcquireRelease(s, "/floor/" + name);
        }
        if (s.lock.equals("lockstep")) {
            Lease lease = s.provider.tryAcquire(name, LEASE).orElseThrow();
            return lease.release();
        }
        InterProcessLock lock = fresh
                ? s.newCuratorLock("/curator/" + name)
                : s.sameLocks.computeIfAbsent(name, n -> s.newCuratorLock("/curator/" + n));
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
        private long handoffs;
        private long packetsAtStart;

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
            packetsAtStart = packetsReceived(server);
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
            // And until the server holds the waiter's watch on the holder's node (wchp lists watches by
            // path): the release is then delivered as a notification, never found by a poll.
            while (!ZooKeeperServer.fourLetterWord(server.port(), "wchp").contains(parent + "/")) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("waiter did not watch the holder's node: "
                            + ZooKeeperServer.fourLetterWord(server.port(), "wchp"));
                }
                Thread.sleep(1);
            }
        }

        /** The waiter gives the lock back (not timed). */
        @TearDown(Level.Invocation)
        public void giveBack() throws InterruptedException {
            handoffs++;
            released.put(true);
        }

        /** Stops the waiter, the clients and the server. */
        @TearDown(Level.Trial)
        public void stop(BenchmarkParams params) throws InterruptedException {
            if (handoffs > 0) {
                double perRound = (packetsReceived(server) - packetsAtStart) / (double) handoffs;
                // Not checked: a round's count includes the set-up's polling for the queued waiter.
                CommandMix.recordSeen(
                        params,
                        handoffs,
                        version(server),
                        Map.of("requests per round, set-up polling included", perRound));
            }
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

    private static final byte[] LEASE_DATA = "20000".getBytes(StandardCharsets.US_ASCII);

    /**
     * lock-zookeeper's requests on the raw client: (the parent container, unless this client has seen
     * it,) the node and the listing back to back, then the delete. A parent the server reaped meanwhile
     * costs one more round trip with the parent's create, as in lock-zookeeper.
     */
    private static boolean floorAcquireRelease(Uncontended s, String parent) throws Exception {
        ZooKeeper zk = s.curator.getZookeeperClient().getZooKeeper();
        for (int round = 0; round < 2; round++) {
            CompletableFuture<Integer> parentCreated = new CompletableFuture<>();
            if (!s.floorParents.contains(parent)) {
                zk.create(
                        parent,
                        new byte[0],
                        ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.CONTAINER,
                        (rc, path, ctx, name, stat) -> parentCreated.complete(rc),
                        null);
            } else {
                parentCreated.complete(KeeperException.Code.NODEEXISTS.intValue());
            }
            CompletableFuture<String> created = new CompletableFuture<>();
            zk.create(
                    parent + "/token-",
                    LEASE_DATA,
                    ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.EPHEMERAL_SEQUENTIAL,
                    (rc, path, ctx, name, stat) -> created.complete(rc == 0 ? name : null),
                    null);
            CompletableFuture<List<String>> listed = new CompletableFuture<>();
            zk.getChildren(parent, false, (rc, path, ctx, children) -> listed.complete(children), null);
            int parentCode = parentCreated.get(10, TimeUnit.SECONDS);
            String node = created.get(10, TimeUnit.SECONDS);
            List<String> children = listed.get(10, TimeUnit.SECONDS);
            if (node == null) {
                s.floorParents.remove(parent); // reaped: create it with the next try
                continue;
            }
            if (parentCode == 0 || parentCode == KeeperException.Code.NODEEXISTS.intValue()) {
                s.floorParents.add(parent);
            }
            if (children == null || children.size() != 1) {
                throw new IllegalStateException("lock was not free: " + children);
            }
            zk.delete(node, -1);
            return true;
        }
        throw new IllegalStateException("could not create a node under " + parent);
    }

    /** {@code "ZooKeeper 3.9.x"}, from the server's {@code mntr}. */
    static String version(ZooKeeperServer server) {
        for (String line : ZooKeeperServer.fourLetterWord(server.port(), "mntr").split("\n")) {
            String[] kv = line.trim().split("\\s+");
            if (kv.length >= 2 && kv[0].equals("zk_version")) {
                return "ZooKeeper " + kv[1].split("[-,]")[0];
            }
        }
        return "ZooKeeper (version unknown)";
    }

    /** The server's {@code zk_packets_received} from {@code mntr}. */
    static long packetsReceived(ZooKeeperServer server) {
        for (String line : ZooKeeperServer.fourLetterWord(server.port(), "mntr").split("\n")) {
            String[] kv = line.trim().split("\\s+");
            if (kv.length == 2 && kv[0].equals("zk_packets_received")) {
                return Long.parseLong(kv[1]);
            }
        }
        throw new IllegalStateException("mntr shows no zk_packets_received on port " + server.port());
    }

    static CuratorFramework curator(ZooKeeperServer server) throws InterruptedException {
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
