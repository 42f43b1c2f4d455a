package io.lockstep.cli;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockTimeoutException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code lockctl} command line. Exit codes:
 *
 * <ul>
 *   <li>{@value #OK}: everything asked for was done and every invariant held;
 *   <li>{@value #INVARIANT_BROKEN}: an invariant broke (a fencing backend accepted a stale write, fences
 *       went backwards, a held lease was lost, a kit test failed);
 *   <li>{@value #USAGE}: bad usage or configuration (unknown option, bad duration or URI);
 *   <li>{@value #UNAVAILABLE}: a backend could not be reached or started (compare: any row);
 *   <li>{@value #HELD}: the lock was held by someone else for the whole wait ({@code acquire}, {@code run}),
 *       or is held now ({@code inspect});
 *   <li>{@value #CANNOT_TELL}: {@code inspect} on a backend that cannot tell who holds a lock.
 * </ul>
 *
 * <p>{@code run} passes its command's exit code through instead, except for the cases above.
 *
 * <p>Ctrl-C ends a run cleanly: every lease lockctl holds is released by the providers' close in a
 * shutdown hook, and the servers and child JVMs it started are stopped.
 */
@Command(
        name = "lockctl",
        mixinStandardHelpOptions = true,
        versionProvider = LockCtl.Version.class,
        description = "Distributed locks: compare backends under faults, run the kit, hold and inspect locks.",
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  ok (inspect: the lock is free; run: the command's own exit code)",
            "  1  an invariant broke: a violation under a fault the tier claims to survive,",
            "     a lease lost while held (acquire, run), a kit test failed",
            "  2  usage or configuration error, or an output file that cannot be written",
            "  3  a backend unavailable (compare: any row)",
            "  4  held by someone else for the whole wait (acquire, run); inspect: held",
            "  5  inspect: the backend cannot tell who holds a lock",
            "",
            "Examples:",
            "  lockctl compare --report report.html --json run.json",
            "  lockctl report run.json baseline.json -o diff.html",
            "  lockctl compare --uri redis://staging:6379 --uri etcd://staging:2379",
            "  lockctl run nightly-backup --uri redis://h:6379 --wait 1s -- /usr/local/bin/backup",
            "  lockctl inspect nightly-backup --uri redis://h:6379 --json"
        },
        subcommands = {
            CompareCommand.class,
            TckCommand.class,
            AcquireCommand.class,
            RunCommand.class,
            InspectCommand.class,
            ReportCommand.class,
            BackendsCommand.class,
            AutoComplete.GenerateCompletion.class
        })
public final class LockCtl implements Runnable {

    /** Exit code: done, every invariant held. */
    public static final int OK = 0;
    /** Exit code: an invariant broke. */
    public static final int INVARIANT_BROKEN = 1;
    /** Exit code: usage or configuration error. */
    public static final int USAGE = 2;
    /** Exit code: a backend could not be reached or started. */
    public static final int UNAVAILABLE = 3;
    /** Exit code: the lock was held by someone else for the whole wait; for inspect, the lock is held. */
    public static final int HELD = 4;
    /** Exit code: inspect cannot tell whether the lock is held on this backend. */
    public static final int CANNOT_TELL = 5;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** gRPC (etcd's client) logs INFO lines through java.util.logging at start-up; a user needs none of them. */
    private static final java.util.logging.Logger GRPC = java.util.logging.Logger.getLogger("io.grpc");

    /** Runs lockctl and exits with its exit code. */
    public static void main(String[] args) {
        GRPC.setLevel(java.util.logging.Level.WARNING);
        System.exit(run(args));
    }

    /** Runs lockctl as {@link #main} does, on this process' standard streams, and returns the exit code. */
    public static int run(String... args) {
        return commandLine(
                        new PrintWriter(System.out, true, StandardCharsets.UTF_8),
                        new PrintWriter(System.err, true, StandardCharsets.UTF_8))
                .execute(args);
    }

    /** A configured command line writing to {@code out} and {@code err}. */
    static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new LockCtl());
        cl.setOut(out);
        cl.setErr(err);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.registerConverter(java.time.Duration.class, new DurationConverter());
        // One line naming the option, the value and the rule, and where the usage is: not a 40-line dump.
        cl.setParameterExceptionHandler((ex, args) -> {
            CommandLine where = ex.getCommandLine();
            PrintWriter w = where.getErr();
            w.println("lockctl: " + ex.getMessage());
            w.println("  (usage: " + where.getCommandSpec().qualifiedName() + " --help)");
            w.flush();
            return USAGE;
        });
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            PrintWriter w = commandLine.getErr();
            w.println("lockctl: " + message(e));
            if (e instanceof BackendUnavailableException) {
                return UNAVAILABLE;
            }
            if (e instanceof LockTimeoutException) {
                return HELD;
            }
            if (e instanceof LockConfigurationException || e instanceof IllegalArgumentException) {
                return USAGE;
            }
            w.println("(unexpected " + e.getClass().getName() + ")");
            return INVARIANT_BROKEN;
        });
        return cl;
    }

    private static String message(Throwable e) {
        String m = e.getMessage();
        return m == null ? e.getClass().getSimpleName() : m;
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required");
    }

    /** The version from the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = LockCtl.class.getPackage().getImplementationVersion();
            return new String[] {
                "lockctl " + (v == null ? "(development build)" : v),
                "Java " + System.getProperty("java.version") + " on " + System.getProperty("os.name")
            };
        }
    }
}
