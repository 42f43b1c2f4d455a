package io.lockstep.cli;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code lockctl report RUN.json [OTHER.json]}: re-renders a run saved by {@code compare --json} as the HTML
 * report, with the verdicts worked out again from its rows; given a second run, prints and adds to the page
 * how each figure and verdict changed from the second (the baseline) to the first.
 */
@Command(
        name = "report",
        mixinStandardHelpOptions = true,
        description = {
            "Re-renders a saved compare run (--json) as the HTML report, or compares two.",
            "Given a second saved run (the baseline), prints and adds to the page how each figure and verdict changed."
        })
final class ReportCommand implements Callable<Integer> {

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "RUN.json", description = "a run saved by compare --json")
    Path run;

    @Parameters(
            index = "1",
            arity = "0..1",
            paramLabel = "OTHER.json",
            description = "another saved run to compare with (the baseline)")
    @Nullable
    Path other;

    @Option(
            names = {"-o", "--out"},
            paramLabel = "FILE",
            description = "the HTML file to write (default: RUN.json's name with .html)")
    @Nullable
    Path out;

    @Override
    public Integer call() {
        Path html = out != null ? out : defaultOut(run);
        CompareReport report = read("RUN.json", run);
        CompareReport baseline = other == null ? null : read("OTHER.json", other);
        CompareCommand.checkWritable("--out", html);
        PrintWriter w = spec.commandLine().getOut();
        String comparison = baseline == null ? null : RunDiff.render(report, run, baseline, other);
        w.print(comparison != null ? comparison : Table.render(report));
        ObjectMapper mapper = new ObjectMapper();
        try {
            Files.writeString(html, HtmlReport.render(report, comparison, mapper), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("--out " + html + " could not be written: " + e.getMessage(), e);
        }
        w.println("Report written to " + html.toAbsolutePath());
        w.flush();
        return LockCtl.OK;
    }

    private static Path defaultOut(Path run) {
        String name = run.getFileName().toString();
        String base = name.endsWith(".json") ? name.substring(0, name.length() - ".json".length()) : name;
        return run.toAbsolutePath().resolveSibling(base + ".html");
    }

    /** Reads a saved run; its verdicts are worked out again from its rows. */
    static CompareReport read(String what, Path file) {
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException(what + " " + file + " cannot be read (missing or permission denied)");
        }
        ObjectMapper mapper = new ObjectMapper()
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(SerializationFeature.INDENT_OUTPUT);
        CompareReport r;
        try {
            r = mapper.readValue(file.toFile(), CompareReport.class);
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    what + " " + file + " is not a run saved by compare --json: "
                            + e.getMessage().lines().findFirst().orElse(""),
                    e);
        }
        if (r == null || r.backends() == null || r.schedule() == null || r.faults() == null) {
            throw new IllegalArgumentException(
                    what + " " + file + " is not a run saved by compare --json: no backends");
        }
        return r.withVerdicts();
    }
}
