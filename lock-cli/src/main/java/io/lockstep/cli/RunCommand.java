package io.lockstep.cli;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockTimeoutException;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code lockctl run NAME --uri U [--wait D] -- command args...}: what {@code flock(1)}, {@code etcdctl lock}
 * and {@code consul lock} do. Runs the command while holding the lock (renewed), with the fencing token in
 * {@code LOCKSTEP_FENCE}, passes its exit code through, and stops it (SIGTERM, then SIGKILL after
 * {@code --grace}) the moment the lease is lost.
 */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        description = {
            "Runs a command while holding the lock, renewing it; LOCKSTEP_FENCE and LOCKSTEP_LOCK are in its environment.",
            "Exits with the command's exit code; 4 (command not run) if someone else held the lock for the whole --wait;",
            "1 if the lease was lost while the command ran: the command is sent SIGTERM, then SIGKILL after --grace;",
            "127 if the command cannot be started. Example (crontab): lockctl run nightly --uri redis://h:6379 -- backup.sh"
        })
final class RunCommand implements Callable<Integer> {

    /** Exit code when the command cannot be started, as shells use. */
    static final int CANNOT_START = 127;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "the lock's name")
    String name;

    @Parameters(
            index = "1..*",
            arity = "1..*",
            paramLabel = "COMMAND",
            description = "the command and its arguments, after --")
    List<String> command = new ArrayList<>();

    @Option(names = "--uri", required = true, description = "the backend, e.g. redis://localhost:6379")
    String uri;

    @Option(
            names = "--wait",
            defaultValue = "10s",
            description = "how long to wait for the lock (default ${DEFAULT-VALUE})")
    Duration wait;

    @Option(
            names = "--lease",
            defaultValue = "10s",
            description =
                    "lease time, renewed at a third; a lost lease is noticed within it (default ${DEFAULT-VALUE})")
    Duration lease;

    @Option(
            names = "--grace",
            defaultValue = "10s",
            description =
                    "after SIGTERM, how long the command may take to stop before SIGKILL (default ${DEFAULT-VALUE})")
    Duration grace;

    @Option(
            names = "--label",
            paramLabel = "LABEL",
            description = "a label naming this holder to 'lockctl inspect', kept with its host and pid where the"
                    + " backend can (1 to 64 ASCII letters, digits and . _ - : @ / +)")
    @Nullable
    String label;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter err = spec.commandLine().getErr();
        LeaseOptions options =
                Labels.apply(LeaseOptions.of(lease).withWaitTime(wait).withAutoRenew(), label);
        AtomicReference<@Nullable Process> child = new AtomicReference<>();
        LockProvider provider = Locks.open(uri);
        // Ctrl-C or SIGTERM to lockctl: stop the command first, then release (closing the provider).
        Thread hook = new Thread(
                () -> {
                    Process p = child.get();
                    if (p != null) {
                        stop(p);
                    }
                    provider.close();
                },
                "lockctl-run-exit");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            Lease held;
            try {
                held = provider.acquire(name, options);
            } catch (LockTimeoutException e) {
                err.println("lockctl: '" + name + "' is still held by someone else after " + Durations.text(wait)
                        + "; the command was not run");
                return LockCtl.HELD;
            }
            ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
            pb.environment().put("LOCKSTEP_LOCK", name);
            held.fencingToken().ifPresent(f -> pb.environment().put("LOCKSTEP_FENCE", Long.toString(f)));
            Process p;
            try {
                p = pb.start();
            } catch (IOException e) {
                held.release();
                err.println("lockctl: cannot run '" + command.get(0) + "': " + e.getMessage());
                return CANNOT_START;
            }
            child.set(p);
            AtomicReference<@Nullable LossReason> lost = new AtomicReference<>();
            held.lost().thenAccept(reason -> {
                if (reason != LossReason.RELEASED) {
                    lost.set(reason);
                    err.println("lockctl: lost '" + name + "' (" + reason + ") while the command ran; stopping it"
                            + " (SIGTERM, SIGKILL after " + Durations.text(grace) + ")");
                    err.flush();
                    stop(p);
                }
            });
            int code = p.waitFor();
            LossReason reason = lost.get();
            if (reason != null) {
                err.println("lockctl: the command ended (exit " + code + ") after '" + name + "' was lost: " + reason);
                return LockCtl.INVARIANT_BROKEN;
            }
            if (!held.release()) {
                err.println("lockctl: '" + name + "' was already lost when the command ended (exit " + code + ")");
                return LockCtl.INVARIANT_BROKEN;
            }
            return code;
        } finally {
            provider.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down: the hook runs
            }
        }
    }

    /** SIGTERM, then SIGKILL (the command and what it started) if it has not ended after the grace. */
    private void stop(Process p) {
        if (!p.isAlive()) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
        }
    }
}
