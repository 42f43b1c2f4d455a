package io.lockstep.cli;

import io.lockstep.spi.LockProviderFactory;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/** {@code lockctl backends}: the providers on the class path, their schemes, and what compare starts locally. */
@Command(
        name = "backends",
        mixinStandardHelpOptions = true,
        description = "Lists the lock providers on the class path (URI schemes) and the backends compare can start.")
final class BackendsCommand implements Callable<Integer> {

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        List<String> lines = new ArrayList<>();
        for (LockProviderFactory f : ServiceLoader.load(LockProviderFactory.class)) {
            lines.add(String.format(
                    "  %-12s schemes %-24s %s",
                    f.name(),
                    String.join(",", new java.util.TreeSet<>(f.schemes())),
                    f.getClass().getName()));
        }
        lines.sort(null);
        out.println("Providers on the class path (Locks.open finds them by URI scheme):");
        lines.forEach(out::println);
        out.println();
        out.println("Backends compare starts locally (tier as documented; the kit checks each provider's claims):");
        for (BackendDescriptor d : BackendDescriptor.all()) {
            out.printf("  %-12s %-14s needs: %s%n", d.name(), d.tier(), d.install());
        }
        out.println();
        out.println("Capabilities and tiers as each provider reports them: lockctl inspect or lockctl tck --uri URI.");
        return LockCtl.OK;
    }
}
