package io.lockstep.examples.scenarios;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.PostgresServer;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * Worker A takes the lock for account "acme", reads the balance, and freezes in a long GC pause. Its lease
 * runs out; worker B takes the lock with a higher fencing token and books a deposit. A wakes up believing
 * it still holds the lock and writes its stale balance. The lock cannot stop that write; the database
 * does, with one conditional update: {@code UPDATE ... WHERE fence <= ?} ("write only if my fence is at
 * least the last one written"). PostgreSQL runs on a free loopback port (the kit's launcher).
 */
public final class GcPauseFencedAtTheDatabase {
    private GcPauseFencedAtTheDatabase() {}

    static final Duration LEASE = Duration.ofSeconds(1);

    /** The fenced write: applied only if {@code fence} is at least the fence of the last write. */
    static final String FENCED_UPDATE = "UPDATE ledger SET balance = ?, fence = ? WHERE account = ? AND fence <= ?";

    /** Runs on {@code args[0]} (a redis:// URI) or on a local redis-server; exits 1 if the invariant broke. */
    public static void main(String[] args) throws Exception {
        Scenario.main(args, GcPauseFencedAtTheDatabase::run);
    }

    static boolean run(String redisUri, PrintStream out) throws Exception {
        try (PostgresServer postgres = PostgresServer.start();
                Connection db = DriverManager.getConnection(postgres.jdbcUrl());
                LockProvider a = Locks.open(redisUri);
                LockProvider b = Locks.open(redisUri)) {
            try (Statement s = db.createStatement()) {
                s.execute(
                        "CREATE TABLE ledger (account text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL)");
                s.execute("INSERT INTO ledger VALUES ('acme', 100, 0)");
            }
            String lock = "ledger/acme/" + System.nanoTime();
            Lease leaseA = a.acquire(lock, LeaseOptions.of(LEASE));
            long fenceA = leaseA.fencingToken().orElseThrow();
            long seenByA = balance(db);
            out.println("A holds the lock (fence " + fenceA + "), reads balance " + seenByA + ", wants to withdraw 30");
            out.println("A freezes in a GC pause longer than its " + LEASE.toMillis() + " ms lease ...");
            Scenario.freeze(LEASE.toMillis() + 300);

            Lease leaseB = b.acquire(lock, LeaseOptions.of(LEASE).withWaitTime(Duration.ofSeconds(5)));
            long fenceB = leaseB.fencingToken().orElseThrow();
            long seenByB = balance(db);
            int rowsB = write(db, seenByB + 50, fenceB);
            out.println("B holds the lock (fence " + fenceB + "), deposits 50: " + seenByB + " -> " + (seenByB + 50)
                    + (rowsB == 1 ? " (written)" : " (REJECTED)"));
            leaseB.release();

            out.println("A wakes up, still believing it holds the lock: isValid() = " + leaseA.isValid()
                    + ", but it does not look");
            int rowsA = write(db, seenByA - 30, fenceA);
            out.println("A writes " + (seenByA - 30) + " with fence " + fenceA + ": "
                    + (rowsA == 0 ? "rejected by the database (fence " + fenceA + " < " + fenceB + ")" : "ACCEPTED"));
            long finalBalance = balance(db);
            out.println("final balance " + finalBalance + " (B's deposit kept: " + (finalBalance == 150) + ")");
            return fenceB > fenceA && rowsB == 1 && rowsA == 0 && finalBalance == 150;
        }
    }

    private static long balance(Connection db) throws SQLException {
        try (Statement s = db.createStatement();
                ResultSet r = s.executeQuery("SELECT balance FROM ledger WHERE account = 'acme'")) {
            r.next();
            return r.getLong(1);
        }
    }

    private static int write(Connection db, long balance, long fence) throws SQLException {
        try (PreparedStatement p = db.prepareStatement(FENCED_UPDATE)) {
            p.setLong(1, balance);
            p.setLong(2, fence);
            p.setString(3, "acme");
            p.setLong(4, fence);
            return p.executeUpdate();
        }
    }
}
