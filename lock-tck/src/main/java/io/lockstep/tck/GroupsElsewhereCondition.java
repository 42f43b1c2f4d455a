package io.lockstep.tck;

import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Skips the tests of the groups a kit class leaves to another class ({@link
 * LockProviderCompatibilityKit#groupsRunElsewhere()}), reporting them as disabled with that class's name.
 * Decided per test from the kit instance, before the kit opens a provider for it, so a skipped group costs
 * nothing. Registered on {@link LockProviderCompatibilityKit}.
 */
final class GroupsElsewhereCondition implements ExecutionCondition {

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Class<?> group = context.getTestClass().orElse(null);
        if (group == null
                || group.getEnclosingClass() != LockProviderCompatibilityKit.class
                || context.getTestMethod().isEmpty()) {
            return ConditionEvaluationResult.enabled("not a kit test");
        }
        Optional<LockProviderCompatibilityKit> kit =
                context.getTestInstances().flatMap(i -> i.findInstance(LockProviderCompatibilityKit.class));
        return kit.flatMap(k -> k.groupsRunElsewhere().filter(g -> g.runIn() != k.getClass()))
                .filter(g -> g.groups().contains(group.getSimpleName()))
                .map(g -> ConditionEvaluationResult.disabled("the " + group.getSimpleName() + " group runs in "
                        + g.runIn().getName() + ", where it checks the same (groupsRunElsewhere())"))
                .orElseGet(() -> ConditionEvaluationResult.enabled("the group runs here"));
    }
}
