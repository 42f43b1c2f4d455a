package io.lockstep.tck;

import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Skips the clock group's tests in a kit class whose {@link LockProviderCompatibilityKit#clockGroupRunsIn()}
 * names another class, reporting them as disabled with that class's name. Decided per test from the kit
 * instance, before the kit opens a provider for it, so a skipped group costs nothing. Registered on {@link
 * LockProviderCompatibilityKit}.
 */
final class ClockGroupElsewhere implements ExecutionCondition {

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (context.getTestClass().orElse(null) != LockProviderCompatibilityKit.Clock.class
                || context.getTestMethod().isEmpty()) {
            return ConditionEvaluationResult.enabled("not a clock test");
        }
        Optional<LockProviderCompatibilityKit> kit =
                context.getTestInstances().flatMap(i -> i.findInstance(LockProviderCompatibilityKit.class));
        Optional<Class<? extends LockProviderCompatibilityKit>> elsewhere =
                kit.flatMap(k -> k.clockGroupRunsIn().filter(c -> c != k.getClass()));
        return elsewhere
                .map(c -> ConditionEvaluationResult.disabled("the clock group runs in " + c.getName()
                        + ", which has this backend's clock behaviour (clockGroupRunsIn())"))
                .orElseGet(() -> ConditionEvaluationResult.enabled("the clock group runs here"));
    }
}
