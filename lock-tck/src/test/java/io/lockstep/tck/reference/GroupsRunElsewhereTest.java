package io.lockstep.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedClass;

import io.lockstep.tck.GroupsRunElsewhere;
import io.lockstep.tck.LockProviderCompatibilityKit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * {@link LockProviderCompatibilityKit#groupsRunElsewhere()}: the groups a variant class leaves to another
 * class are reported disabled, naming it, and the others still run; bad arguments are refused by name.
 */
class GroupsRunElsewhereTest {

    /** A variant of the reference kit that leaves the groups without faults to the reference kit. */
    static class FaultFreeElsewhere extends InMemoryCompatibilityTest {
        @Override
        protected Optional<GroupsRunElsewhere> groupsRunElsewhere() {
            return Optional.of(GroupsRunElsewhere.faultFree(InMemoryCompatibilityTest.class));
        }
    }

    /** A variant that names itself: nothing is elsewhere, every group runs. */
    static class NamesItself extends InMemoryCompatibilityTest {
        @Override
        protected Optional<GroupsRunElsewhere> groupsRunElsewhere() {
            return Optional.of(GroupsRunElsewhere.faultFree(NamesItself.class));
        }
    }

    @Test
    void aGroupLeftElsewhereIsReportedDisabledNamingTheClassThatRunsIt() throws ClassNotFoundException {
        Outcome names = run(FaultFreeElsewhere.class, "Names");
        assertThat(names.succeeded()).as("Names tests run").isZero();
        assertThat(names.failures()).isEmpty();
        assertThat(names.skipped()).as("skip reasons").isNotEmpty().allSatisfy(reason -> assertThat(reason)
                .contains("the Names group runs in " + InMemoryCompatibilityTest.class.getName()));
    }

    @Test
    void theOtherGroupsStillRun() throws ClassNotFoundException {
        Outcome partition = run(FaultFreeElsewhere.class, "Partition");
        assertThat(partition.failures()).isEmpty();
        assertThat(partition.skipped()).isEmpty();
        assertThat(partition.succeeded()).as("Partition tests passed").isPositive();
    }

    @Test
    void aClassNamingItselfRunsEveryGroup() throws ClassNotFoundException {
        Outcome names = run(NamesItself.class, "Names");
        assertThat(names.failures()).isEmpty();
        assertThat(names.skipped()).isEmpty();
        assertThat(names.succeeded()).as("Names tests passed").isPositive();
    }

    @Test
    void theTwoCutsNameKitGroupsAndDoNotOverlap() {
        assertThat(GroupsRunElsewhere.FAULT_FREE).doesNotContainAnyElementsOf(GroupsRunElsewhere.FAULTS);
        // Constructing validates every name; a renamed group fails here, not silently in a variant.
        assertThat(GroupsRunElsewhere.faultFree(InMemoryCompatibilityTest.class).groups())
                .isEqualTo(GroupsRunElsewhere.FAULT_FREE);
        assertThat(GroupsRunElsewhere.faults(InMemoryCompatibilityTest.class).groups())
                .isEqualTo(GroupsRunElsewhere.FAULTS);
    }

    @Test
    void badArgumentsAreRefusedByName() {
        assertThatThrownBy(() -> new GroupsRunElsewhere(InMemoryCompatibilityTest.class, Set.of("Names", "Nmaes")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("groups")
                .hasMessageContaining("'Nmaes' is not one");
        assertThatThrownBy(() -> new GroupsRunElsewhere(InMemoryCompatibilityTest.class, Set.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("groups");
        assertThatThrownBy(() -> new GroupsRunElsewhere(null, Set.of("Names")))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("runIn");
        assertThatThrownBy(() -> new GroupsRunElsewhere(InMemoryCompatibilityTest.class, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("groups");
    }

    private record Outcome(int succeeded, List<String> skipped, List<String> failures) {}

    private static Outcome run(Class<?> kit, String group) throws ClassNotFoundException {
        Class<?> nested = Class.forName(LockProviderCompatibilityKit.class.getName() + "$" + group);
        List<String> skipped = Collections.synchronizedList(new ArrayList<>());
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        int[] succeeded = {0};
        Launcher launcher = LauncherFactory.create();
        launcher.execute(
                LauncherDiscoveryRequestBuilder.request()
                        .selectors(selectNestedClass(List.of(kit), nested))
                        .build(),
                new TestExecutionListener() {
                    @Override
                    public void executionSkipped(TestIdentifier id, String reason) {
                        if (id.isTest()) {
                            skipped.add(reason);
                        }
                    }

                    @Override
                    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                        if (!id.isTest() || result.getStatus() == TestExecutionResult.Status.ABORTED) {
                            return;
                        }
                        if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
                            synchronized (succeeded) {
                                succeeded[0]++;
                            }
                        } else {
                            failures.add(id.getDisplayName() + ": " + result.getThrowable());
                        }
                    }
                });
        return new Outcome(succeeded[0], List.copyOf(skipped), List.copyOf(failures));
    }
}
