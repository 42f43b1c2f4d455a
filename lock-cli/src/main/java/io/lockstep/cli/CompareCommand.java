package io.lockstep.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.lockstep.BackendUnavailableException;
import io.lockstep.LockConfig;
import io.lockstep.Locks;
import io.lockstep.cli.CompareReport.BackendResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code lockctl compare}: the same contended workload and fault schedule on every backend, one table. */
@Command(
        name = "compare",
        mixinStandardHelpOptions = true,
        description = {
            "Runs the same contended workload with the same seeded faults against each backend and prints one table.",
            "Without --uri it starts every backend locally (a backend that cannot start is a row saying why);",
            "with --uri (repeatable) it runs against those backends, injecting only client-side faults."
        })
final class CompareCommand implements Callable<Integer> {

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--uri",
            paramLabel = "URI",
            description = "a backend to compare (repeatable); none: local backends")
    List<String> uris = new ArrayList<>();

    @Option(
            names = "--backend",
            paramLabel = "NAME",
            split = ",",
            description = "local backends to run (default: redis, redlock, etcd, zookeeper, jdbc; also redis-sentinel)")
    List<String> backends = new ArrayList<>();

    @Option(
            names = "--clustered",
            description = "run etcd and ZooKeeper as 3-node clusters; their server faults hit the leader"
                    + " (leader-pause, leader-kill + restart)")
    boolean clustered;

    @Option(
            names = "--duration",
            defaultValue = "12s",
            description = "workload time per backend (default ${DEFAULT-VALUE})")
    Duration duration;

    @Option(names = "--clients", defaultValue = "4", description = "contending clients (default ${DEFAULT-VALUE})")
    int clients;

    @Option(names = "--lease", defaultValue = "1s", description = "lease time (default ${DEFAULT-VALUE})")
    Duration lease;

    @Option(
            names = "--hold",
            defaultValue = "20ms",
            description = "hold time per acquisition (default ${DEFAULT-VALUE})")
    Duration hold;

    @Option(
            names = "--fault-length",
            defaultValue = "2s",
            description = "how long each fault lasts; more than --lease (default ${DEFAULT-VALUE})")
    Duration faultLength;

    @Option(
            names = "--faults",
            split = ",",
            defaultValue = "holder-pause,partition,server-pause,server-kill",
            description =
                    "faults to inject: holder-pause, partition, server-pause, server-kill, or none (default ${DEFAULT-VALUE})")
    List<String> faults;

    @Option(
            names = "--seed",
            defaultValue = "42",
            description = "seed of the fault schedule (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--report", paramLabel = "FILE", description = "write a self-contained HTML report")
    @Nullable
    Path report;

    @Option(names = "--json", paramLabel = "FILE", description = "write the results as JSON ('-' for standard output)")
    @Nullable
    String json;

    @Option(names = "--no-progress", description = "do not draw a progress bar")
    boolean noProgress;

    private final @Nullable List<BackendDescriptor> catalogue;
    private volatile @Nullable BackendRun current;

    /** Compares the backends on main. */
    CompareCommand() {
        this.catalogue = null;
    }

    /** Compares the backends of {@code catalogue} (a test adds one that cannot start). */
    CompareCommand(List<BackendDescriptor> catalogue) {
        this.catalogue = List.copyOf(catalogue);
    }

    private volatile boolean interrupted;

    @Override
    public Integer call() {
        List<FaultKind> kinds = new ArrayList<>();
        for (String f : faults) {
            if (!f.equalsIgnoreCase("none")) {
                kinds.add(FaultKind.parse(f));
            }
        }
        CompareSettings settings = new CompareSettings(duration, clients, lease, hold, faultLength, kinds, seed);
        FaultSchedule schedule = FaultSchedule.of(kinds, duration, faultLength, seed);
        List<BackendDescriptor> selected = select();
        for (String uri : uris) {
            Locks.factoryFor(LockConfig.of(uri)); // a bad URI or scheme fails now, before anything runs
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        CountDownLatch done = new CountDownLatch(1);
        Thread hook = new Thread(
                () -> {
                    interrupted = true;
                    BackendRun run = current;
                    if (run != null) {
                        run.stop();
                    }
                    try {
                        done.await(15, TimeUnit.SECONDS); // the run closes its providers: leases released
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "lockctl-ctrl-c");
        Runtime.getRuntime().addShutdownHook(hook);
        List<BackendResult> results = new ArrayList<>();
        try {
            if (uris.isEmpty()) {
                for (BackendDescriptor d : selected) {
                    if (interrupted) {
                        break;
                    }
                    results.add(runLocal(d, settings, schedule, err));
                }
            } else {
                for (String uri : uris) {
                    if (interrupted) {
                        break;
                    }
                    results.add(runRemote(uri, settings, schedule, err));
                }
            }
        } finally {
            done.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // shutting down already
            }
        }
        CompareReport compare = new CompareReport(
                String.join(" ", new LockCtl.Version().getVersion()),
                seed,
                Durations.text(duration),
                clients,
                Durations.text(lease),
                Durations.text(hold),
                Durations.text(faultLength),
                kinds.stream().map(k -> k.label).toList(),
                Analysis.EDGES_MS,
                results);
        // With --json -, standard output carries only the JSON; the table goes to standard error.
        PrintWriter tableOut = "-".equals(json) ? err : out;
        tableOut.print(Table.render(compare));
        tableOut.flush();
        writeOutputs(compare, out, tableOut);
        if (results.stream().anyMatch(BackendResult::invariantBroken)) {
            return LockCtl.INVARIANT_BROKEN;
        }
        if (!results.isEmpty() && results.stream().noneMatch(BackendResult::started)) {
            return LockCtl.UNAVAILABLE;
        }
        return LockCtl.OK;
    }

    private List<BackendDescriptor> select() {
        List<BackendDescriptor> catalogue = this.catalogue != null ? this.catalogue : BackendDescriptor.all(clustered);
        if (backends.isEmpty()) {
            return catalogue.stream().filter(BackendDescriptor::inDefaultRun).toList();
        }
        List<BackendDescriptor> out = new ArrayList<>();
        for (String name : backends) {
            out.add(catalogue.stream()
                    .filter(d ->
                            d.name().equalsIgnoreCase(name.strip()) || d.name().equalsIgnoreCase(name.strip() + "-3"))
                    .findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("--backend '" + name + "' is unknown; backends: "
                            + String.join(
                                    ", ",
                                    catalogue.stream()
                                            .map(BackendDescriptor::name)
                                            .toList()))));
        }
        return out;
    }

    private BackendResult runLocal(
            BackendDescriptor d, CompareSettings settings, FaultSchedule schedule, PrintWriter err) {
        LocalBackend local;
        try {
            local = d.starter().start();
        } catch (RuntimeException e) {
            return CompareReport.unavailable(
                    d.name(), d.tier(), "(local)", String.valueOf(e.getMessage()), d.install());
        }
        try (local) {
            return runOne(d.name(), d.tier(), local.uri(), local, settings, schedule, err);
        }
    }

    private BackendResult runRemote(String uri, CompareSettings settings, FaultSchedule schedule, PrintWriter err) {
        String scheme = LockConfig.of(uri).scheme();
        return runOne(scheme, "?", uri, null, settings, schedule, err);
    }

    private BackendResult runOne(
            String name,
            String tier,
            String uri,
            @Nullable LocalBackend local,
            CompareSettings settings,
            FaultSchedule schedule,
            PrintWriter err) {
        BackendRun run = new BackendRun(name, uri, local, settings, schedule);
        current = run;
        ProgressBar bar = noProgress
                ? null
                : new ProgressBarBuilder()
                        .setTaskName(String.format("%-10s", name))
                        .setInitialMax(settings.duration().toMillis())
                        .setUnit("s", 1000)
                        .setStyle(ProgressBarStyle.ASCII)
                        .continuousUpdate()
                        .build();
        try {
            BackendResult r = run.run(elapsed -> {
                if (bar != null) {
                    bar.stepTo(elapsed);
                }
            });
            return r;
        } catch (BackendUnavailableException e) {
            return CompareReport.unavailable(name, tier, LockConfig.redacted(uri), String.valueOf(e.getMessage()), "");
        } finally {
            if (bar != null) {
                bar.close();
            }
            current = null;
        }
    }

    private void writeOutputs(CompareReport compare, PrintWriter out, PrintWriter notes) {
        ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        try {
            if (json != null) {
                String text = mapper.writeValueAsString(compare);
                if (json.equals("-")) {
                    out.println(text);
                } else {
                    Files.writeString(Path.of(json), text, StandardCharsets.UTF_8);
                    notes.println("JSON written to " + json);
                }
            }
            if (report != null) {
                Files.writeString(report, HtmlReport.render(compare, mapper), StandardCharsets.UTF_8);
                notes.println("Report written to " + report.toAbsolutePath());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the report: " + e.getMessage(), e);
        }
        out.flush();
        notes.flush();
    }
}
