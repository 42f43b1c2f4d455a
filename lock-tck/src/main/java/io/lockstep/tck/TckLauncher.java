package io.lockstep.tck;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedClass;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs the compatibility kit against any backend by URI and prints a summary a person can read:
 *
 * <pre>
 * java -cp lock-tck.jar:lock-redis.jar:... io.lockstep.tck.TckLauncher --uri redis://staging:6379
 * </pre>
 *
 * <p>Options: {@code --uri <uri>} (required), {@code --timing <factor>} to scale every wait on a slow
 * or distant backend, {@code --group <name>} (repeatable) to run only some groups, by class name
 * ({@code Expiry}) or display name. The exit code is 0 when nothing failed, 1 when a test failed, 2 for
 * bad arguments. The provider's artifact must be on the class path ({@link UriCompatibilityKit}).
 */
public final class TckLauncher {

    /** Exit code when every test passed or was skipped. */
    public static final int OK = 0;
    /** Exit code when a test failed. */
    public static final int FAILED = 1;
    /** Exit code for bad arguments. */
    public static final int USAGE = 2;

    private static final String USAGE_TEXT = "usage: TckLauncher --uri <uri> [--timing <factor>] [--group <name>]...\n"
            + "  --uri     the backend to check, for example redis://localhost:6379\n"
            + "  --timing  multiply every wait by this factor (default 1)\n"
            + "  --group   run only this group, by class or display name (repeatable)";

    private TckLauncher() {}

    /** Runs the kit and exits with {@link #OK}, {@link #FAILED} or {@link #USAGE}. */
    public static void main(String[] args) {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.exit(run(args, out));
    }

    /**
     * Runs the kit as {@link #main} does, printing to {@code out}, and returns the exit code. Sets the
     * system properties {@value UriCompatibilityKit#URI_PROPERTY} and {@value Timing#PROPERTY}.
     */
    public static int run(String[] args, PrintStream out) {
        String uri = null;
        String timing = null;
        List<String> groups = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--help") || arg.equals("-h")) {
                out.println(USAGE_TEXT);
                return OK;
            }
            if (i + 1 >= args.length) {
                out.println("missing value after " + arg + "\n" + USAGE_TEXT);
                return USAGE;
            }
            String value = args[++i];
            switch (arg) {
                case "--uri" -> uri = value;
                case "--timing" -> timing = value;
                case "--group" -> groups.add(value);
                default -> {
                    out.println("unknown option " + arg + "\n" + USAGE_TEXT);
                    return USAGE;
                }
            }
        }
        if (uri == null || uri.isBlank()) {
            out.println("--uri is required\n" + USAGE_TEXT);
            return USAGE;
        }
        if (timing != null) {
            try {
                Timing.of(Double.parseDouble(timing));
            } catch (IllegalArgumentException e) {
                out.println("--timing must be a number between 0.1 and 100, was '" + timing + "'");
                return USAGE;
            }
            System.setProperty(Timing.PROPERTY, timing);
        }
        System.setProperty(UriCompatibilityKit.URI_PROPERTY, uri);

        List<DiscoverySelector> selectors = new ArrayList<>();
        if (groups.isEmpty()) {
            selectors.add(selectClass(UriCompatibilityKit.class));
        } else {
            for (String group : groups) {
                Optional<Class<?>> nested = findGroup(group);
                if (nested.isEmpty()) {
                    out.println("no group named '" + group + "'; groups: " + String.join(", ", groupNames()));
                    return USAGE;
                }
                selectors.add(selectNestedClass(List.of(UriCompatibilityKit.class), nested.get()));
            }
        }
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectors)
                .filters(EngineFilter.includeEngines("junit-jupiter")) // the kit is Jupiter; no other engine runs
                .build();
        Summary summary = new Summary();
        out.println("Lockstep compatibility kit against " + redact(uri) + " (timing factor "
                + System.getProperty(Timing.PROPERTY, "1") + ")");
        Launcher launcher = LauncherFactory.create();
        launcher.execute(request, summary);
        summary.print(out);
        return summary.failed > 0 ? FAILED : OK;
    }

    private static Optional<Class<?>> findGroup(String name) {
        for (Class<?> c : LockProviderCompatibilityKit.class.getDeclaredClasses()) {
            org.junit.jupiter.api.DisplayName display = c.getAnnotation(org.junit.jupiter.api.DisplayName.class);
            if (c.isAnnotationPresent(org.junit.jupiter.api.Nested.class)
                    && (c.getSimpleName().equalsIgnoreCase(name)
                            || display != null && display.value().equalsIgnoreCase(name))) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }

    private static List<String> groupNames() {
        List<String> names = new ArrayList<>();
        for (Class<?> c : LockProviderCompatibilityKit.class.getDeclaredClasses()) {
            if (c.isAnnotationPresent(org.junit.jupiter.api.Nested.class)) {
                names.add(c.getSimpleName());
            }
        }
        names.sort(null);
        return names;
    }

    /** The URI without its password, even when it does not parse as a URI (never echoed raw). */
    private static String redact(String uri) {
        return io.lockstep.LockConfig.redacted(uri);
    }

    /** Counts per group and the reasons for every failure and skip. */
    private static final class Summary implements TestExecutionListener {
        private static final class Group {
            int passed;
            int failed;
            int skipped;
            final List<String> notes = new ArrayList<>();
        }

        private final Map<String, Group> groups = new LinkedHashMap<>();
        private @Nullable TestPlan plan;
        int passed;
        int failed;
        int skipped;

        @Override
        public void testPlanExecutionStarted(TestPlan testPlan) {
            plan = testPlan;
        }

        @Override
        public synchronized void executionSkipped(TestIdentifier id, String reason) {
            if (id.isTest()) {
                skipped++;
                Group g = group(id);
                g.skipped++;
                g.notes.add("SKIP " + id.getDisplayName() + ": " + reason);
            } else if (plan != null) {
                for (TestIdentifier child : plan.getDescendants(id)) {
                    if (child.isTest()) {
                        executionSkipped(child, reason);
                    }
                }
            }
        }

        @Override
        public synchronized void executionFinished(TestIdentifier id, TestExecutionResult result) {
            if (!id.isTest()) {
                if (result.getStatus() == TestExecutionResult.Status.FAILED) {
                    // A container failed (e.g. the provider could not be built): count it as a failure.
                    failed++;
                    group(id).failed++;
                    group(id).notes.add("FAIL " + id.getDisplayName() + ": " + reason(result));
                }
                return;
            }
            Group g = group(id);
            switch (result.getStatus()) {
                case SUCCESSFUL -> {
                    passed++;
                    g.passed++;
                }
                case ABORTED -> {
                    skipped++;
                    g.skipped++;
                    g.notes.add("SKIP " + id.getDisplayName() + ": " + reason(result));
                }
                case FAILED -> {
                    failed++;
                    g.failed++;
                    g.notes.add("FAIL " + id.getDisplayName() + ": " + reason(result));
                }
            }
        }

        private Group group(TestIdentifier id) {
            return groups.computeIfAbsent(groupName(id), k -> new Group());
        }

        private String groupName(TestIdentifier id) {
            TestIdentifier node = id;
            while (plan != null) {
                if (node != id
                        && node.getSource()
                                .filter(ClassSource.class::isInstance)
                                .isPresent()) {
                    return node.getDisplayName();
                }
                Optional<TestIdentifier> parent = plan.getParent(node);
                if (parent.isEmpty()) {
                    break;
                }
                node = parent.get();
            }
            return id.getDisplayName();
        }

        private static String reason(TestExecutionResult result) {
            return result.getThrowable()
                    .map(t -> {
                        String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
                        String firstLines = message.strip()
                                .lines()
                                .limit(6)
                                .reduce((a, b) -> a + "\n        " + b)
                                .orElse("");
                        return t.getClass().getSimpleName() + ": " + firstLines;
                    })
                    .orElse(result.getStatus().toString());
        }

        synchronized void print(PrintStream out) {
            out.println();
            // Failures first, then groups that passed, then groups skipped entirely; by name within each.
            List<Map.Entry<String, Group>> ordered = new ArrayList<>(groups.entrySet());
            ordered.sort(java.util.Comparator.<Map.Entry<String, Group>>comparingInt(
                            e -> e.getValue().failed > 0 ? 0 : e.getValue().passed > 0 ? 1 : 2)
                    .thenComparing(Map.Entry::getKey));
            for (Map.Entry<String, Group> e : ordered) {
                Group g = e.getValue();
                String status = g.failed > 0 ? "FAIL" : g.passed > 0 ? "PASS" : "SKIP";
                out.printf(
                        Locale.ROOT,
                        "%-4s  %-55s %3d passed, %d failed, %d skipped%n",
                        status,
                        e.getKey(),
                        g.passed,
                        g.failed,
                        g.skipped);
                for (String note : g.notes) {
                    out.println("        " + note);
                }
            }
            out.println();
            out.printf(
                    Locale.ROOT,
                    "%s: %d passed, %d failed, %d skipped%n",
                    failed > 0 ? "FAILED" : "PASSED",
                    passed,
                    failed,
                    skipped);
        }
    }
}
