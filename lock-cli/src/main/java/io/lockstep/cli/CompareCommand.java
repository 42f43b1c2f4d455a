package io.lockstep.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.lockstep.BackendUnavailableException;
import io.lockstep.LockConfig;
import io.lockstep.Locks;
import io.lockstep.cli.CompareReport.BackendResult;
import java.io.IOException;
import java.io.PrintWriter;
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
            paramLabel = "NAME[?OPTIONS]",
            description = "local backends to run (default: redis, redlock, etcd, zookeeper, jdbc; also redis-sentinel),"
                    + " comma-separated or repeated, each with options: server options (redis, redlock:"
                    + " appendfsync=always|everysec|no) and lock-URI settings (redis, redlock, redis-sentinel, etcd),"
                    + " e.g. 'redis?appendfsync=always', 'redis-sentinel?waitReplicas=1'. Inside options a comma"
                    + " starts a new row only before a backend's name; elsewhere it is part of the value")
    List<String> backends = new ArrayList<>();

    @Option(
            names = "--clustered",
            description = "run etcd and ZooKeeper as 3-node clusters; their server faults hit the leader"
                    + " (leader-pause, leader-kill + restart)")
    boolean clustered;

    @Option(
            names = "--duration",
            description = "workload time per backend (default: what the faults need, at least 10s: each fault gets"
                    + " its length, two leases (at least 2s) to recover, and 3s to set up or restart where needed)")
    @Nullable
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
            description =
                    "faults to inject: holder-pause, holder-partition, partition, server-pause, server-kill, clock,"
                            + " or none (default: all; with --uri the client-side ones: holder-pause, holder-partition,"
                            + " partition, clock)")
    @Nullable
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

    @Option(
            names = "--repeat",
            defaultValue = "1",
            paramLabel = "N",
            description = "run the whole comparison N times (1 to 20) and print each figure's median and range")
    int repeat;

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
        List<FaultKind> kinds = faultKinds();
        if (!uris.isEmpty() && (!backends.isEmpty() || clustered)) {
            throw new IllegalArgumentException((clustered ? "--clustered" : "--backend " + String.join(",", backends))
                    + " cannot be combined with --uri: --uri runs against the given backends, --backend and"
                    + " --clustered choose the ones lockctl starts");
        }
        if (repeat < 1 || repeat > 20) {
            throw new IllegalArgumentException("--repeat must be between 1 and 20, was " + repeat);
        }
        Duration run = duration != null
                ? duration
                : max(Duration.ofSeconds(10), FaultSchedule.minimumDuration(kinds, faultLength, lease));
        CompareSettings settings = new CompareSettings(run, clients, lease, hold, faultLength, kinds, seed);
        FaultSchedule schedule = FaultSchedule.of(kinds, run, faultLength, lease, seed);
        List<LocalRow> selected = select();
        for (String uri : uris) {
            Locks.factoryFor(LockConfig.of(uri)); // a bad URI or scheme fails now, before anything runs
        }
        checkWritable("--json", json == null || json.equals("-") ? null : Path.of(json));
        checkWritable("--report", report);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        CountDownLatch printed = new CountDownLatch(1);
        Thread hook = new Thread(
                () -> {
                    interrupted = true;
                    BackendRun current = this.current;
                    if (current != null) {
                        current.stop();
                    }
                    try {
                        // The run closes its providers (leases released), then what was measured is printed.
                        printed.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "lockctl-ctrl-c");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            List<List<BackendResult>> runs = new ArrayList<>();
            List<BackendResult> results = new ArrayList<>();
            for (int n = 0; n < repeat && !interrupted; n++) {
                results = new ArrayList<>();
                if (uris.isEmpty()) {
                    for (LocalRow row : selected) {
                        if (interrupted) {
                            break;
                        }
                        results.add(runLocal(row, settings, schedule));
                    }
                } else {
                    List<String> names = new ArrayList<>();
                    for (String uri : uris) {
                        if (interrupted) {
                            break;
                        }
                        results.add(runRemote(uri, names, settings, schedule));
                    }
                }
                runs.add(results);
            }
            List<String> kindLabels = kinds.stream().map(k -> k.label).toList();
            CompareReport compare = new CompareReport(
                    String.join(" ", new LockCtl.Version().getVersion()),
                    seed,
                    Durations.text(run),
                    clients,
                    Durations.text(lease),
                    Durations.text(hold),
                    Durations.text(faultLength),
                    kindLabels,
                    schedule.entries().stream()
                            .map(e -> new CompareReport.ScheduledFault(
                                    e.kind().label,
                                    e.at().toMillis(),
                                    e.length().toMillis(),
                                    e.windowEnd().toMillis()))
                            .toList(),
                    Analysis.EDGES_MS,
                    results,
                    interrupted,
                    runs.size(),
                    runs.size() > 1 ? Repeats.of(runs, kindLabels) : List.of(),
                    Verdicts.of(results));
            // With --json -, standard output carries only the JSON; the table goes to standard error.
            PrintWriter tableOut = "-".equals(json) ? err : out;
            tableOut.print(Table.render(compare));
            tableOut.flush();
            if (!writeOutputs(compare, out, tableOut, err)) {
                return LockCtl.USAGE;
            }
            List<BackendResult> all = runs.stream().flatMap(List::stream).toList();
            if (all.stream().anyMatch(BackendResult::invariantBroken)) {
                return LockCtl.INVARIANT_BROKEN;
            }
            if (all.stream().anyMatch(r -> !r.started())) {
                return LockCtl.UNAVAILABLE;
            }
            return LockCtl.OK;
        } finally {
            printed.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // shutting down already
            }
        }
    }

    private List<FaultKind> faultKinds() {
        List<FaultKind> kinds = new ArrayList<>();
        if (faults == null) {
            for (FaultKind k : FaultKind.values()) {
                if (uris.isEmpty() || k.clientSide) {
                    kinds.add(k);
                }
            }
            return kinds;
        }
        for (String f : faults) {
            if (f.strip().equalsIgnoreCase("none")) {
                continue;
            }
            FaultKind k = FaultKind.parse(f);
            if (!uris.isEmpty() && !k.clientSide) {
                throw new IllegalArgumentException("--faults " + k.label + " needs a server lockctl started; with --uri"
                        + " only holder-pause, holder-partition, partition and clock can run");
            }
            if (!kinds.contains(k)) {
                kinds.add(k);
            }
        }
        return kinds;
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    /** Fails now, before anything runs, if {@code file} could not be written at the end. */
    static void checkWritable(String option, @Nullable Path file) {
        if (file == null) {
            return;
        }
        Path absolute = file.toAbsolutePath();
        Path dir = absolute.getParent();
        if (Files.isDirectory(absolute)) {
            throw new IllegalArgumentException(option + " " + file + " is a directory; give a file");
        }
        if (dir == null || !Files.isDirectory(dir)) {
            throw new IllegalArgumentException(option + " " + file + ": the directory " + dir + " does not exist");
        }
        if (Files.exists(absolute) ? !Files.isWritable(absolute) : !Files.isWritable(dir)) {
            throw new IllegalArgumentException(option + " " + file + " cannot be written (permission denied)");
        }
    }

    private List<LocalRow> select() {
        List<BackendDescriptor> catalogue = this.catalogue != null ? this.catalogue : BackendDescriptor.all(clustered);
        if (backends.isEmpty()) {
            return catalogue.stream()
                    .filter(BackendDescriptor::inDefaultRun)
                    .map(LocalRow::of)
                    .toList();
        }
        List<LocalRow> out = new ArrayList<>();
        for (String spec : LocalRow.split(backends, catalogue)) {
            LocalRow row = LocalRow.parse(spec, catalogue);
            if (out.stream().anyMatch(r -> r.label().equals(row.label()))) {
                throw new IllegalArgumentException("--backend '" + row.label() + "' is given twice");
            }
            out.add(row);
        }
        return out;
    }

    private BackendResult runLocal(LocalRow row, CompareSettings settings, FaultSchedule schedule) {
        BackendDescriptor d = row.descriptor();
        LocalBackend local;
        try {
            local = d.starter().start(row.serverArgs());
        } catch (RuntimeException e) {
            return CompareReport.unavailable(
                    row.label(), d.tier(), "(local)", String.valueOf(e.getMessage()), d.install());
        }
        try (local) {
            return runOne(row.label(), d.tier(), row.uri(local.uri()), local, settings, schedule);
        }
    }

    private BackendResult runRemote(String uri, List<String> names, CompareSettings settings, FaultSchedule schedule) {
        // Two URIs of one scheme are two rows: redis, redis-2.
        String scheme = LockConfig.of(uri).scheme();
        String name = scheme;
        for (int n = 2; names.contains(name); n++) {
            name = scheme + "-" + n;
        }
        names.add(name);
        return runOne(name, "?", uri, null, settings, schedule);
    }

    private BackendResult runOne(
            String name,
            String tier,
            String uri,
            @Nullable LocalBackend local,
            CompareSettings settings,
            FaultSchedule schedule) {
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

    /** Writes {@code --json} and {@code --report}; false (with a message) if a file could not be written. */
    private boolean writeOutputs(CompareReport compare, PrintWriter out, PrintWriter notes, PrintWriter err) {
        ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        boolean ok = true;
        if (json != null) {
            try {
                String text = mapper.writeValueAsString(compare);
                if (json.equals("-")) {
                    out.println(text);
                } else {
                    Files.writeString(Path.of(json), text, StandardCharsets.UTF_8);
                    notes.println("JSON written to " + json);
                }
            } catch (IOException e) {
                err.println("lockctl: --json " + json + " could not be written: " + e.getMessage());
                ok = false;
            }
        }
        if (report != null) {
            try {
                Files.writeString(report, HtmlReport.render(compare, mapper), StandardCharsets.UTF_8);
                notes.println("Report written to " + report.toAbsolutePath());
            } catch (IOException e) {
                err.println("lockctl: --report " + report + " could not be written: " + e.getMessage());
                ok = false;
            }
        }
        out.flush();
        notes.flush();
        err.flush();
        return ok;
    }
}
