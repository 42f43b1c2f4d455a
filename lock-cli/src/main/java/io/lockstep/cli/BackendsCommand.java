package io.lockstep.cli;

import io.lockstep.Capability;
import io.lockstep.spi.LockProviderFactory;
import io.lockstep.spi.ProviderKind;
import java.io.PrintWriter;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/**
 * {@code lockctl backends}: the providers on the class path, their schemes, the tier and capabilities each
 * kind of URI claims (from {@link LockProviderFactory#kinds()}, without connecting), and what compare starts
 * locally.
 */
@Command(
        name = "backends",
        mixinStandardHelpOptions = true,
        description = {
            "Lists the lock providers, the tier each kind of URI claims, and the backends compare starts.",
            "Tiers and capabilities are as declared by each provider; nothing is connected."
        })
final class BackendsCommand implements Callable<Integer> {

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        List<LockProviderFactory> factories = StreamSupport.stream(
                        ServiceLoader.load(LockProviderFactory.class).spliterator(), false)
                .sorted(Comparator.comparing(LockProviderFactory::name))
                .toList();
        out.println("Providers on the class path (Locks.open finds them by URI scheme), and what each kind claims:");
        for (LockProviderFactory f : factories) {
            boolean reference = f.getClass().getName().startsWith(TEST_REFERENCE);
            out.printf(
                    "  %-12s schemes %-24s %s%n",
                    f.name(),
                    String.join(",", new TreeSet<>(f.schemes())),
                    reference
                            ? "(the kit's in-process test reference: one JVM only, not a backend)"
                            : f.getClass().getName());
            if (reference) {
                continue;
            }
            List<ProviderKind> kinds = f.kinds();
            if (kinds.isEmpty()) {
                out.println(
                        "      (declares no tier or capabilities before connecting: lockctl tck --uri URI checks them)");
            }
            for (ProviderKind k : kinds) {
                out.println("      " + line(k));
            }
        }
        out.println();
        out.println("Backends compare starts locally (--clustered: etcd and ZooKeeper as 3-node clusters):");
        for (BackendDescriptor d : BackendDescriptor.all()) {
            out.printf("  %-15s %-14s needs: %s%n", d.name(), d.tier(), d.install());
        }
        out.println();
        out.println(
                "Claims are checked, not trusted: lockctl tck --uri URI runs the kit's tests of the tier and of every"
                        + " claimed capability.");
        return LockCtl.OK;
    }

    /** The package of lock-tck's reference provider, which lockctl carries because it runs the kit. */
    static final String TEST_REFERENCE = "io.lockstep.tck.";

    /** {@code kind <label> | <tier> | <capabilities> | <uri form>}: one line a person or a test can read. */
    static String line(ProviderKind k) {
        String caps =
                k.info().capabilities().stream().sorted().map(Capability::name).collect(Collectors.joining(","));
        return "kind " + k.label() + " | " + k.info().tier() + " | " + (caps.isEmpty() ? "-" : caps) + " | "
                + uriForm(k.uriForm());
    }

    /**
     * The URI form a kind declares, less the forms that do not work: lock-jdbc's MariaDB dialect needs
     * sequences, which MySQL 8 lacks (lock-jdbc README), so {@code jdbc:mysql://} is not offered.
     */
    static String uriForm(String declared) {
        return declared.replace(", jdbc:mysql://", "").replace("jdbc:mysql://, ", "");
    }
}
