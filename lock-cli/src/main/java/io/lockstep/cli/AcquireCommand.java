package io.lockstep.cli;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockTimeoutException;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code lockctl acquire NAME --uri U --hold 30s}: takes a lock, renews it, reports its state, releases it. */
@Command(
        name = "acquire",
        mixinStandardHelpOptions = true,
        description = {
            "Takes the lock, holds it (renewing) for --hold, printing its fence and remaining validity, then releases it.",
            "Ctrl-C releases it at once. Exits 1 if the lease is lost while held, 4 if someone else held it for the"
                    + " whole --wait."
        })
final class AcquireCommand implements Callable<Integer> {

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "the lock's name")
    String name;

    @Option(names = "--uri", required = true, description = "the backend, e.g. redis://localhost:6379")
    String uri;

    @Option(names = "--hold", defaultValue = "30s", description = "how long to hold it (default ${DEFAULT-VALUE})")
    Duration hold;

    @Option(
            names = "--lease",
            defaultValue = "10s",
            description = "lease time, renewed at a third (default ${DEFAULT-VALUE})")
    Duration lease;

    @Option(names = "--wait", defaultValue = "10s", description = "how long to wait for it (default ${DEFAULT-VALUE})")
    Duration wait;

    @Option(
            names = "--every",
            defaultValue = "1s",
            description = "how often to print the lease's state (default ${DEFAULT-VALUE})")
    Duration every;

    @Option(
            names = "--label",
            paramLabel = "LABEL",
            description = "a label naming this holder to 'lockctl inspect', kept with its host and pid where the"
                    + " backend can (1 to 64 ASCII letters, digits and . _ - : @ / +)")
    @Nullable
    String label;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        LeaseOptions options =
                Labels.apply(LeaseOptions.of(lease).withWaitTime(wait).withAutoRenew(), label);
        LockProvider provider = Locks.open(uri);
        // Ctrl-C: closing the provider releases the lease (bounded by its close timeout).
        Thread hook = new Thread(provider::close, "lockctl-release-on-exit");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            Lease held;
            try {
                held = provider.acquire(name, options);
            } catch (LockTimeoutException e) {
                spec.commandLine()
                        .getErr()
                        .println("lockctl: '" + name + "' is still held by someone else after " + Durations.text(wait));
                return LockCtl.HELD;
            }
            out.printf(
                    "acquired '%s' on %s: fence %s, valid for %d ms%n",
                    name,
                    provider.info().name(),
                    held.fencingToken().isPresent()
                            ? Long.toString(held.fencingToken().getAsLong())
                            : "none",
                    held.remaining().toMillis());
            out.flush();
            CompletableFuture<LossReason> lost = held.lost().toCompletableFuture();
            long end = System.nanoTime() + hold.toNanos();
            while (System.nanoTime() < end) {
                long left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
                try {
                    LossReason reason = lost.get(Math.max(1, Math.min(left, every.toMillis())), TimeUnit.MILLISECONDS);
                    if (reason == LossReason.RELEASED) {
                        // Ctrl-C: the shutdown hook closed the provider, which released the lease.
                        out.println("released '" + name + "' (interrupted)");
                        out.flush();
                        return LockCtl.OK;
                    }
                    out.println("LOST '" + name + "': " + reason);
                    out.flush();
                    return LockCtl.INVARIANT_BROKEN;
                } catch (TimeoutException e) {
                    out.printf(
                            "holding '%s': fence %s, valid for %d ms%n",
                            name,
                            held.fencingToken().isPresent()
                                    ? Long.toString(held.fencingToken().getAsLong())
                                    : "none",
                            held.remaining().toMillis());
                    out.flush();
                } catch (ExecutionException e) {
                    throw new IllegalStateException("lease loss signal failed", e.getCause());
                }
            }
            boolean released = held.release();
            out.println(released ? "released '" + name + "'" : "'" + name + "' was already lost when released");
            return released ? LockCtl.OK : LockCtl.INVARIANT_BROKEN;
        } finally {
            provider.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down: the hook runs (close is idempotent)
            }
        }
    }
}
