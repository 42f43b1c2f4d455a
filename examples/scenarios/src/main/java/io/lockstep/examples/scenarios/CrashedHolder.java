package io.lockstep.examples.scenarios;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.faults.TcpProxy;
import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;

/**
 * A holder's machine dies while it holds the nightly-report lock: it never releases and never renews.
 * Nobody else may run the report while its lease lasts, and the lock must free by itself once the lease
 * (TTL) has run out, so the report is not blocked for ever. The crash is the holder's connection going
 * silent (the kit's TcpProxy drops every byte), as when a machine loses power.
 */
public final class CrashedHolder {
    private CrashedHolder() {}

    static final Duration LEASE = Duration.ofSeconds(2);

    /** Runs on {@code args[0]} (a redis:// URI) or on a local redis-server; exits 1 if the invariant broke. */
    public static void main(String[] args) throws Exception {
        Scenario.main(args, CrashedHolder::run);
    }

    static boolean run(String redisUri, PrintStream out) throws Exception {
        URI target = URI.create(redisUri);
        String lock = "reports/nightly/" + System.nanoTime();
        try (TcpProxy link = TcpProxy.start(target.getHost(), target.getPort());
                LockProvider crashing = Locks.open(
                        redisUri.replace(target.getHost() + ":" + target.getPort(), link.host() + ":" + link.port()));
                LockProvider survivor = Locks.open(redisUri)) {
            Lease held = crashing.acquire(lock, LeaseOptions.of(LEASE).withAutoRenew());
            out.println("worker A holds '" + lock + "' (fence "
                    + held.fencingToken().orElse(-1) + ", lease " + LEASE.toMillis() + " ms, renewing)");
            link.drop(); // A's machine dies: no renewal, no release will ever arrive
            long crashedAt = System.nanoTime();
            out.println("worker A crashes without releasing");

            Optional<Lease> early = survivor.tryAcquire(lock, LeaseOptions.of(LEASE));
            boolean heldWhileValid = early.isEmpty();
            out.println(
                    heldWhileValid
                            ? "worker B right after the crash: the lock is still held (A's lease has not run out)"
                            : "worker B got the lock right after the crash: A's lease was ignored");
            early.ifPresent(Lease::release);

            Lease taken = survivor.acquire(lock, LeaseOptions.of(LEASE).withWaitTime(LEASE.multipliedBy(5)));
            long waitedMs = (System.nanoTime() - crashedAt) / 1_000_000;
            out.println("worker B acquires it " + waitedMs + " ms after the crash (fence "
                    + taken.fencingToken().orElse(-1) + "): the lock freed by its TTL");
            boolean newerFence =
                    taken.fencingToken().orElse(0) > held.fencingToken().orElse(0);
            taken.release();
            boolean freedInTime = waitedMs <= LEASE.toMillis() * 5;
            return heldWhileValid && freedInTime && newerFence;
        }
    }
}
