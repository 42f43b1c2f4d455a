package io.lockstep.tck;

import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs only the kit groups named in {@code -Dlockstep.tck.groups} (comma-separated; a group's class name
 * such as {@code Expiry} or its display name such as {@code Fault: server paused}, either case); every group
 * when the property is empty or absent. Groups not named are reported as disabled, naming the property, so
 * a filtered run never reads as a full pass. Registered on {@link LockProviderCompatibilityKit}.
 */
final class KitGroups implements ExecutionCondition {

    /** The system property that names the groups to run. */
    static final String PROPERTY = "lockstep.tck.groups";

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Set<String> wanted = wanted();
        Class<?> group = context.getTestClass().orElse(null);
        if (wanted.isEmpty() || group == null || group.getEnclosingClass() != LockProviderCompatibilityKit.class) {
            return ConditionEvaluationResult.enabled("every kit group runs");
        }
        DisplayName display = group.getAnnotation(DisplayName.class);
        boolean named = wanted.contains(group.getSimpleName().toLowerCase(Locale.ROOT))
                || (display != null && wanted.contains(display.value().toLowerCase(Locale.ROOT)));
        return named
                ? ConditionEvaluationResult.enabled("named in -D" + PROPERTY)
                : ConditionEvaluationResult.disabled("not named in -D" + PROPERTY + "=" + System.getProperty(PROPERTY));
    }

    private static Set<String> wanted() {
        String raw = System.getProperty(PROPERTY, "").strip();
        return Arrays.stream(raw.split(","))
                .map(String::strip)
                .filter(s -> !s.isEmpty())
                .map(s -> s.toLowerCase(Locale.ROOT))
                .collect(Collectors.toSet());
    }
}
