package io.lockstep.cli;

import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.TckLauncher;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code lockctl tck --uri U}: the compatibility kit against any backend (lock-tck's {@link TckLauncher}). */
@Command(
        name = "tck",
        mixinStandardHelpOptions = true,
        description = {
            "Runs the compatibility kit against a backend; lock names are tck/<test>/<random>/..., safe on a shared backend.",
            "Prints one line per group and exits 1 if a test failed."
        })
final class TckCommand implements Callable<Integer> {

    @Option(names = "--uri", required = true, description = "the backend to check, e.g. redis://localhost:6379")
    String uri;

    @Option(
            names = "--group",
            paramLabel = "NAME",
            description = "run only this group, by class or display name (repeatable)")
    List<String> groups = new ArrayList<>();

    @Option(
            names = "--timing",
            paramLabel = "N",
            description = "multiply every wait by N on a slow backend (0.1 to 100)")
    Double timing;

    @Override
    public Integer call() {
        // Fail fast and clearly (exit 2 or 3) rather than with every test of the kit.
        try (LockProvider provider = Locks.open(uri)) {
            provider.tryAcquire("lockctl/tck/probe", LeaseOptions.of(Duration.ofSeconds(2)))
                    .ifPresent(io.lockstep.Lease::release);
        }
        List<String> args = new ArrayList<>(List.of("--uri", uri));
        if (timing != null) {
            args.addAll(List.of("--timing", Double.toString(timing)));
        }
        for (String g : groups) {
            args.addAll(List.of("--group", g));
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        return TckLauncher.run(args.toArray(String[]::new), out);
    }
}
