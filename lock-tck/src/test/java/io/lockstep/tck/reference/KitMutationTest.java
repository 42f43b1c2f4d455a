package io.lockstep.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedClass;

import io.lockstep.tck.LockProviderCompatibilityKit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Tests of the kit itself: each deliberately broken provider must fail the kit group that checks the
 * promise it breaks, while the reference provider passes that same group. Each run launches only the
 * group that must catch the bug, through the JUnit Platform launcher, so the build stays short.
 */
@Timeout(120)
class KitMutationTest {

    static Stream<Arguments> mutants() {
        return Stream.of(
                Arguments.of(MutantKits.ReleaseWithoutOwnerCheck.class, "Ownership", "Ownership"),
                Arguments.of(MutantKits.NoExpiry.class, "Expiry", "Expiry"),
                Arguments.of(MutantKits.RepeatingFences.class, "Fencing", "Fencing"),
                Arguments.of(MutantKits.FailOpenWhenDown.class, "Partition", "Fault: client/server partition"),
                Arguments.of(MutantKits.FailOpenWhenDown.class, "ServerKilled", "Fault: server killed and restarted"),
                Arguments.of(
                        MutantKits.FailOpenWhenDown.class,
                        "ContentionThroughAFault",
                        "Fault: contention through a fault"),
                Arguments.of(MutantKits.LostNeverCompletes.class, "Loss", "Loss signal"),
                Arguments.of(MutantKits.ExtendIgnoresOwnership.class, "Ownership", "Ownership"),
                Arguments.of(MutantKits.ValidityLongerThanGranted.class, "Expiry", "Expiry"),
                Arguments.of(
                        MutantKits.ReleaseFreesEveryLockOfTheClient.class,
                        "ModelBasedSequences",
                        "Model-based sequences"),
                Arguments.of(MutantKits.ReleaseWithoutOwnerCheck.class, "ModelBasedSequences", "Model-based sequences"),
                Arguments.of(MutantKits.NoExpiry.class, "ModelBasedSequences", "Model-based sequences"));
    }

    @ParameterizedTest(name = "{0} fails \"{2}\"")
    @MethodSource("mutants")
    @DisplayName("a broken provider fails the group that checks the promise it breaks; the reference passes it")
    void theKitCatchesTheMutant(Class<?> mutant, String group, String displayName) throws ClassNotFoundException {
        Outcome broken = run(mutant, group);
        assertThat(broken.failedGroups())
                .as("groups failed by %s; failures: %s", mutant.getSimpleName(), broken.failures())
                .contains(displayName);

        Outcome control = run(MutantKits.Reference.class, group);
        assertThat(control.failures())
                .as("the reference provider in group %s", displayName)
                .isEmpty();
        assertThat(control.succeeded())
                .as("tests the reference passed in %s", displayName)
                .isPositive();
    }

    private record Outcome(Set<String> failedGroups, List<String> failures, int succeeded) {}

    private static Outcome run(Class<?> kit, String group) throws ClassNotFoundException {
        Class<?> nested = Class.forName(LockProviderCompatibilityKit.class.getName() + "$" + group);
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectNestedClass(List.of(kit), nested))
                .build();
        Set<String> failedGroups = Collections.synchronizedSet(new LinkedHashSet<>());
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        int[] succeeded = {0};
        Launcher launcher = LauncherFactory.create();
        launcher.execute(request, new TestExecutionListener() {
            private TestPlan plan;

            @Override
            public void testPlanExecutionStarted(TestPlan testPlan) {
                plan = testPlan;
            }

            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (!id.isTest()) {
                    return;
                }
                if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
                    synchronized (succeeded) {
                        succeeded[0]++;
                    }
                    return;
                }
                if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
                    return; // skipped by assumption: not a failure
                }
                groupOf(plan, id).ifPresent(failedGroups::add);
                failures.add(id.getDisplayName() + ": "
                        + result.getThrowable()
                                .map(Throwable::toString)
                                .orElse(result.getStatus().toString()));
            }
        });
        return new Outcome(Set.copyOf(failedGroups), List.copyOf(failures), succeeded[0]);
    }

    /** The display name of the innermost @Nested class above a test. */
    private static Optional<String> groupOf(TestPlan plan, TestIdentifier test) {
        Optional<TestIdentifier> node = plan.getParent(test);
        while (node.isPresent()) {
            TestIdentifier id = node.get();
            if (id.getSource().filter(ClassSource.class::isInstance).isPresent()) {
                return Optional.of(id.getDisplayName());
            }
            node = plan.getParent(id);
        }
        return Optional.empty();
    }
}
