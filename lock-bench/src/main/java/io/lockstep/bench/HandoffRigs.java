package io.lockstep.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.lockstep.Locks;
import io.lockstep.bench.HandoffBenchmark.HandoffLock;
import io.lockstep.bench.HandoffBenchmark.LockstepLock;
import io.lockstep.tck.servers.EtcdServer;
import io.lockstep.tck.servers.PostgresServer;
import io.lockstep.tck.servers.ZooKeeperServer;
import io.lockstep.zookeeper.ZooKeeperLockProvider;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * The servers other than Redis that {@link HandoffBenchmark} runs its contended handoff on, each with its
 * contenders and the server's own count of what they asked per grant:
 *
 * <ul>
 *   <li>etcd ({@code etcd}: lock-etcd; {@code jetcd-lock}: jetcd's {@code Lock} client, one lease per
 *       thread as etcd's lock service keys a waiter by its lease): gRPC messages received per method
 *       ({@link EtcdCounters}); every grant must move etcd's revision by exactly 2 (the waiter's key
 *       written, then deleted), and a {@code jetcd-lock} grant must cost exactly one {@code Lock} and
 *       one {@code Unlock}; etcd's data directory is on disk ({@link EtcdServer#startOnDisk()}), so each
 *       write waits for its fsync, and the trial prints etcd's fsyncs and CPU per grant;
 *   <li>ZooKeeper ({@code lockstep}: lock-zookeeper; {@code curator-mutex}: Curator {@code
 *       InterProcessMutex}, one instance shared by the threads, as its per-thread state allows):
 *       requests received ({@code zk_packets_received}); every grant must cost 2 write transactions
 *       (the waiter's node created, then deleted: the server's zxid), plus a little for a parent the
 *       server reaps between iterations;
 *   <li>PostgreSQL ({@code lease}, {@code session}: lock-jdbc's two modes; ShedLock never waits, so it
 *       has no row here): transactions committed and rolled back, the lock table's row changes and the
 *       fences drawn; a lease-mode grant must update the row exactly twice (claim and release) and a
 *       session-mode grant must draw exactly one fence.
 * </ul>
 */
final class HandoffRigs {

    private static final String NAME = "handoff";

    private HandoffRigs() {}

    /** The rig for {@code server} with {@code backend} on it; fails for a backend the server does not run. */
    static HandoffBenchmark.Rig start(String server, String backend) {
        return switch (server) {
            case "etcd" -> new EtcdRig(backend);
            case "zookeeper" -> new ZooKeeperRig(backend);
            case "postgresql" -> new PostgresRig(backend);
            default -> throw new IllegalArgumentException("unknown server '" + server + "'");
        };
    }

    static String describe(Map<String, Double> perGrant) {
        String line = perGrant.entrySet().stream()
                .filter(e -> e.getValue() >= CommandMix.NOISE)
                .map(e -> e.getKey() + " " + CommandMix.format(e.getValue()))
                .collect(Collectors.joining(", "));
        return line.isEmpty() ? "nothing" : line;
    }

    static void expect(List<String> problems, Map<String, Double> perGrant, String counter, double low, double high) {
        double seen = perGrant.getOrDefault(counter, 0.0);
        if (seen < low - CommandMix.NOISE || seen > high + CommandMix.NOISE) {
            problems.add(counter + " " + CommandMix.format(seen) + " per grant, expected "
                    + (low == high
                            ? CommandMix.format(low)
                            : CommandMix.format(low) + " to " + CommandMix.format(high)));
        }
    }

    static void fail(String server, String backend, List<String> problems, Map<String, Double> perGrant) {
        if (!problems.isEmpty()) {
            throw new IllegalStateException("HandoffBenchmark " + server + " " + backend
                    + " is not what its name says: " + String.join("; ", problems) + " (seen per grant: "
                    + perGrant + ")");
        }
    }

    /** {@code future}'s value within 30 s; {@code what} names it in the failure. */
    static <T> T await(CompletableFuture<T> future, String what) {
        try {
            return future.get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for " + what, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException(what + " failed", e);
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** etcd: lock-etcd or jetcd's {@code Lock} client. */
    static final class EtcdRig implements HandoffBenchmark.Rig {
        private final String backend;
        private final EtcdServer etcd;
        private final Client raw;
        private final HandoffLock lock;
        private Map<String, Long> before = Map.of();
        private double[] workBefore = new double[3];
        private long revisionBefore;

        EtcdRig(String backend) {
            this.backend = backend;
            etcd = EtcdServer.startOnDisk();
            raw = Client.builder().endpoints(etcd.endpoint()).build();
            lock = switch (backend) {
                case "etcd" -> new LockstepLock(Locks.open(etcd.uri()));
                case "jetcd-lock" -> new JetcdLock(raw);
                default -> {
                    close();
                    throw new IllegalArgumentException("etcd runs 'etcd' and 'jetcd-lock', not '" + backend + "'");
                }
            };
        }

        @Override
        public HandoffLock lock() {
            return lock;
        }

        @Override
        public void startCounting() {
            revisionBefore = revision(); // a Range, read before the message counters start
            before = EtcdCounters.received(etcd.endpoint());
            workBefore = EtcdCounters.work(etcd.endpoint());
        }

        @Override
        public HandoffBenchmark.Counted count(long grants, int threads) {
            Map<String, Double> perGrant =
                    EtcdCounters.perOperation(before, EtcdCounters.received(etcd.endpoint()), grants);
            System.out.printf(
                    "etcd's own work per grant, %s: %s%n",
                    backend, EtcdCounters.describeWork(workBefore, EtcdCounters.work(etcd.endpoint()), grants));
            double calls =
                    perGrant.values().stream().mapToDouble(Double::doubleValue).sum();
            perGrant.put("revisions", (revision() - revisionBefore) / (double) grants);
            List<String> problems = new ArrayList<>();
            expect(problems, perGrant, "revisions", 2, 2);
            if (backend.equals("jetcd-lock")) {
                expect(problems, perGrant, "Lock", 1, 1);
                expect(problems, perGrant, "Unlock", 1, 1);
            }
            fail("etcd", backend, problems, perGrant);
            return new HandoffBenchmark.Counted(
                    EtcdCounters.version(etcd.endpoint()),
                    perGrant,
                    "gRPC messages " + CommandMix.format(calls) + ": " + describe(perGrant),
                    calls);
        }

        private long revision() {
            return await(raw.getKVClient().get(bytes("revision")), "etcd's revision")
                    .getHeader()
                    .getRevision();
        }

        @Override
        public void close() {
            try {
                if (lock != null) {
                    lock.close();
                }
            } finally {
                raw.close();
                etcd.close();
            }
        }
    }

    /**
     * jetcd's {@code Lock} client: {@code lock(name, lease)} waits in etcd's lock service, {@code
     * unlock(key)} releases. The service keys a waiter by its lease, so each thread has a lease of its own
     * (granted on its first acquire, long enough for a trial, never renewed).
     */
    static final class JetcdLock implements HandoffLock {
        private final Client client;
        private final ThreadLocal<Long> lease = new ThreadLocal<>();

        JetcdLock(Client client) {
            this.client = client;
        }

        @Override
        public Runnable acquire() {
            Long id = lease.get();
            if (id == null) {
                id = await(client.getLeaseClient().grant(600), "jetcd lease grant")
                        .getID();
                lease.set(id);
            }
            ByteSequence key = await(client.getLockClient().lock(bytes("jetcd/" + NAME), id), "jetcd lock")
                    .getKey();
            return () -> await(client.getLockClient().unlock(key), "jetcd unlock");
        }

        @Override
        public void close() {
            // the client is the rig's
        }
    }

    /** ZooKeeper: lock-zookeeper or Curator's {@code InterProcessMutex}, on one client. */
    static final class ZooKeeperRig implements HandoffBenchmark.Rig {
        private final String backend;
        private final ZooKeeperServer server;
        private final CuratorFramework curator;
        private final HandoffLock lock;
        private long packetsBefore;
        private long zxidBefore;

        ZooKeeperRig(String backend) {
            this.backend = backend;
            server = ZooKeeperServer.start();
            try {
                curator = ZooKeeperBenchmark.curator(server);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                server.close();
                throw new IllegalStateException("interrupted", e);
            }
            lock = switch (backend) {
                case "lockstep" ->
                    new LockstepLock(ZooKeeperLockProvider.builder(curator).build());
                case "curator-mutex" -> new CuratorMutexLock(new InterProcessMutex(curator, "/curator/" + NAME));
                default -> {
                    curator.close();
                    server.close();
                    throw new IllegalArgumentException(
                            "ZooKeeper runs 'lockstep' and 'curator-mutex', not '" + backend + "'");
                }
            };
        }

        @Override
        public HandoffLock lock() {
            return lock;
        }

        @Override
        public void startCounting() {
            zxidBefore = zxid(server);
            packetsBefore = ZooKeeperBenchmark.packetsReceived(server);
        }

        @Override
        public HandoffBenchmark.Counted count(long grants, int threads) {
            if (grants <= 0) {
                throw new IllegalStateException("the benchmark counted no grants; nothing to check");
            }
            Map<String, Double> perGrant = new TreeMap<>();
            double requests = (ZooKeeperBenchmark.packetsReceived(server) - packetsBefore) / (double) grants;
            perGrant.put("requests", requests);
            perGrant.put("write transactions", (zxid(server) - zxidBefore) / (double) grants);
            List<String> problems = new ArrayList<>();
            // When the server reaps the empty parent container while no thread waits (it checks every 250 ms:
            // before the first iteration, between iterations), every thread's next create fails and one of
            // them creates the parent again; each of those writes takes a zxid. Allow that (16 writes per
            // thread in a trial) on top of the 2 per grant, but no third write per grant.
            double slack = Math.min(0.5, (16.0 * threads) / grants);
            expect(problems, perGrant, "write transactions", 2, 2 + slack);
            fail("zookeeper", backend, problems, perGrant);
            return new HandoffBenchmark.Counted(
                    ZooKeeperBenchmark.version(server), perGrant, describe(perGrant), requests);
        }

        @Override
        public void close() {
            try {
                lock.close();
            } finally {
                curator.close();
                server.close();
            }
        }

        /** The last committed transaction's id, from {@code srvr}. */
        static long zxid(ZooKeeperServer server) {
            for (String line :
                    ZooKeeperServer.fourLetterWord(server.port(), "srvr").split("\n")) {
                String trimmed = line.trim();
                if (trimmed.startsWith("Zxid: 0x")) {
                    return Long.parseLong(trimmed.substring("Zxid: 0x".length()), 16);
                }
            }
            throw new IllegalStateException("srvr shows no Zxid on port " + server.port());
        }
    }

    /** Curator {@code InterProcessMutex}: bound to the thread that acquired it, which also releases it. */
    static final class CuratorMutexLock implements HandoffLock {
        private final InterProcessMutex mutex;

        CuratorMutexLock(InterProcessMutex mutex) {
            this.mutex = mutex;
        }

        @Override
        public Runnable acquire() {
            try {
                if (!mutex.acquire(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("InterProcessMutex: not granted within 30 s");
                }
            } catch (Exception e) {
                throw new IllegalStateException("InterProcessMutex acquire failed", e);
            }
            return () -> {
                try {
                    mutex.release();
                } catch (Exception e) {
                    throw new IllegalStateException("InterProcessMutex release failed", e);
                }
            };
        }

        @Override
        public void close() {
            // the client is the rig's
        }
    }

    /** PostgreSQL: lock-jdbc in lease or session mode, one provider. */
    static final class PostgresRig implements HandoffBenchmark.Rig {
        private final String backend;
        private final PostgresServer pg;
        private final HandoffLock lock;
        private final String table;
        private Map<String, Long> before = Map.of();
        private boolean closed;

        PostgresRig(String backend) {
            this.backend = backend;
            if (!backend.equals("lease") && !backend.equals("session")) {
                throw new IllegalArgumentException("PostgreSQL runs 'lease' and 'session', not '" + backend + "'");
            }
            pg = PostgresServer.start();
            table = "lockstep_" + backend;
            lock = new LockstepLock(Locks.open(pg.jdbcUrl() + "&createSchema=true&mode=" + backend));
        }

        @Override
        public HandoffLock lock() {
            return lock;
        }

        @Override
        public void startCounting() throws SQLException {
            before = JdbcBenchmark.counters(pg, table, false);
        }

        /** Closes the provider first: a backend flushes its statistics when it exits. */
        @Override
        public HandoffBenchmark.Counted count(long grants, int threads) throws SQLException {
            if (grants <= 0) {
                throw new IllegalStateException("the benchmark counted no grants; nothing to check");
            }
            closeLock();
            Map<String, Long> after = JdbcBenchmark.counters(pg, table, true);
            Map<String, Double> perGrant = new TreeMap<>();
            after.forEach((k, v) -> perGrant.put(k, (v - before.get(k)) / (double) grants));
            double transactions = perGrant.get("xact_commit") + perGrant.get("xact_rollback");
            List<String> problems = new ArrayList<>();
            // the priming acquire's insert may be flushed to the statistics after the counters were read
            expect(problems, perGrant, "n_tup_ins", 0, 1.0 / grants);
            expect(problems, perGrant, "n_tup_del", 0, 0);
            if (backend.equals("lease")) {
                // claim and release update the row once each; a refused claim changes nothing (it draws a
                // fence in VALUES: fences - 2 is the refused attempts per grant)
                expect(problems, perGrant, "n_tup_upd", 2, 2);
                expect(problems, perGrant, "fences", 2, Double.MAX_VALUE);
            } else {
                // the row is locked, never written; a fence is drawn only for a granted lock
                expect(problems, perGrant, "n_tup_upd", 0, 0);
                expect(problems, perGrant, "fences", 1, 1);
            }
            fail("postgresql", backend, problems, perGrant);
            return new HandoffBenchmark.Counted(
                    JdbcBenchmark.serverVersion(pg),
                    perGrant,
                    "transactions " + CommandMix.format(transactions) + ": " + describe(perGrant),
                    transactions);
        }

        private void closeLock() {
            if (!closed) {
                closed = true;
                lock.close();
            }
        }

        @Override
        public void close() {
            try {
                closeLock();
            } finally {
                pg.close();
            }
        }
    }
}
