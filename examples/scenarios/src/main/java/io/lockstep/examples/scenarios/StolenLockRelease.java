package io.lockstep.examples.scenarios;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.Locks;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Optional;

/**
 * Worker A's lease runs out while it is stuck; worker B takes the lock. When A wakes up it calls
 * release(), as its finally block says. A naive "DEL key" would free B's lock and let C in while B still
 * works. Lockstep's release compares the owner token: it must return false and leave B's lock held.
 */
public final class StolenLockRelease {
    private StolenLockRelease() {}

    static final Duration LEASE = Duration.ofSeconds(1);

    /** Runs on {@code args[0]} (a redis:// URI) or on a local redis-server; exits 1 if the invariant broke. */
    public static void main(String[] args) throws Exception {
        Scenario.main(args, StolenLockRelease::run);
    }

    static boolean run(String redisUri, PrintStream out) throws Exception {
        String lock = "invoices/batch-7/" + System.nanoTime();
        try (LockProvider a = Locks.open(redisUri);
                LockProvider b = Locks.open(redisUri);
                LockProvider c = Locks.open(redisUri)) {
            Lease leaseA = a.acquire(lock, LeaseOptions.of(LEASE)); // no renewal: a stuck A loses it
            out.println(
                    "A holds '" + lock + "' with fence " + leaseA.fencingToken().orElse(-1));
            Scenario.freeze(LEASE.toMillis() + 300);
            Lease leaseB =
                    b.acquire(lock, LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(5)));
            out.println("A's lease ran out; B holds it now with fence "
                    + leaseB.fencingToken().orElse(-1));

            boolean releasedByA = leaseA.release();
            out.println("A wakes up and releases: release() returned " + releasedByA
                    + (releasedByA ? " (it freed someone else's lock!)" : " (B's lock was not touched)"));

            Optional<Lease> byC = c.tryAcquire(lock, LeaseOptions.of(LEASE));
            out.println(
                    byC.isPresent()
                            ? "C got the lock while B still holds it: BROKEN"
                            : "C cannot take it: B still holds it");
            Optional<LockState> state = c.inspect(lock);
            state.ifPresent(s -> out.println(
                    "inspect: held=" + s.held() + ", fence " + s.fencingToken().orElse(-1)));
            boolean stillBs = state.map(s -> s.held() && s.fencingToken().equals(leaseB.fencingToken()))
                    .orElse(true);
            byC.ifPresent(Lease::release);
            boolean bReleases = leaseB.release();
            out.println("B finishes and releases: " + bReleases);
            return !releasedByA && byC.isEmpty() && stillBs && bReleases;
        }
    }
}
