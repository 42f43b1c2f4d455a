package io.lockstep.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedMethod;

import io.lockstep.tck.LockProviderCompatibilityKit;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.platform.engine.DiscoverySelector;
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
                // Whole groups: the bug must show somewhere in the group that checks the promise.
                Arguments.of(MutantKits.ReleaseWithoutOwnerCheck.class, "Ownership", "", "Ownership"),
                Arguments.of(MutantKits.NoExpiry.class, "Expiry", "", "Expiry"),
                Arguments.of(MutantKits.RepeatingFences.class, "Fencing", "", "Fencing"),
                Arguments.of(MutantKits.FailOpenWhenDown.class, "Partition", "", "Fault: client/server partition"),
                Arguments.of(
                        MutantKits.FailOpenWhenDown.class, "ServerKilled", "", "Fault: server killed and restarted"),
                Arguments.of(
                        MutantKits.FailOpenWhenDown.class,
                        "ContentionThroughAFault",
                        "",
                        "Fault: contention through a fault"),
                Arguments.of(MutantKits.LostNeverCompletes.class, "Loss", "", "Loss signal"),
                Arguments.of(MutantKits.ExtendIgnoresOwnership.class, "Ownership", "staleExtendFails", "Ownership"),
                Arguments.of(MutantKits.ValidityLongerThanGranted.class, "Expiry", "", "Expiry"),
                // One check each: the test that names the promise must catch the bug on its own.
                Arguments.of(MutantKits.NamePrefixOnly.class, "Names", "similarNamesAreDifferentLocks", "Lock names"),
                Arguments.of(MutantKits.NameHashed32.class, "Names", "similarNamesAreDifferentLocks", "Lock names"),
                Arguments.of(
                        MutantKits.NameAccentsFolded.class, "Names", "similarNamesAreDifferentLocks", "Lock names"),
                Arguments.of(MutantKits.NameCaseFolded.class, "Names", "similarNamesAreDifferentLocks", "Lock names"),
                Arguments.of(MutantKits.NameNormalized.class, "Names", "similarNamesAreDifferentLocks", "Lock names"),
                Arguments.of(MutantKits.NameTrimmed.class, "Names", "similarNamesAreDifferentLocks", "Lock names"),
                Arguments.of(MutantKits.NameLimitInChars.class, "Names", "theLimitCountsUtf8Bytes", "Lock names"),
                Arguments.of(
                        MutantKits.ReleaseOnAcquiringThreadOnly.class,
                        "Threads",
                        "leaseWorksFromAnotherThread",
                        "Leases across threads"),
                Arguments.of(
                        MutantKits.ReleaseOnAcquiringThreadOnly.class,
                        "Threads",
                        "leaseFromAnEndedThreadIsReleasedHere",
                        "Leases across threads"),
                Arguments.of(MutantKits.WaitsTwiceTheWaitTime.class, "Waiting", "acquireTimesOut", "Waiting"),
                Arguments.of(
                        MutantKits.WaitsTwiceTheWaitTime.class, "Waiting", "tryAcquireWaitsThenGivesUp", "Waiting"),
                Arguments.of(MutantKits.ZeroWaitWaits.class, "Waiting", "zeroWaitTriesOnce", "Waiting"),
                Arguments.of(
                        MutantKits.IgnoresInterrupts.class, "Waiting", "interruptedWaiterStopsPromptly", "Waiting"),
                Arguments.of(
                        MutantKits.InterruptFlagCleared.class, "Waiting", "interruptedWaiterStopsPromptly", "Waiting"),
                Arguments.of(
                        MutantKits.WatchSubscribesLate.class,
                        "Waiting",
                        "releaseBeforeTheFirstWaitIsNotMissed",
                        "Waiting"),
                Arguments.of(
                        MutantKits.CloseLeavesLocks.class,
                        "Closing",
                        "closeFreesTheLocksAtOnce",
                        "Closing the provider"),
                Arguments.of(
                        MutantKits.CloseLeavesLeasesValid.class,
                        "Closing",
                        "closeEndsEveryLease",
                        "Closing the provider"),
                Arguments.of(
                        MutantKits.ClosedProviderGrants.class,
                        "Closing",
                        "closedProviderRefusesAcquires",
                        "Closing the provider"),
                Arguments.of(MutantKits.TwoStepRelease.class, "Ownership", "releaseRacingExpiryIsAtomic", "Ownership"),
                // The test waits on remaining(): it must fail this provider with a message, not wait for ever.
                Arguments.of(
                        MutantKits.RemainingIgnoresExpiry.class,
                        "Ownership",
                        "releaseRacingExpiryIsAtomic",
                        "Ownership"),
                Arguments.of(MutantKits.RemainingIgnoresExpiry.class, "Expiry", "", "Expiry"),
                Arguments.of(MutantKits.ExtendAllFirstOnly.class, "Renewal", "autoRenewalKeepsTheLock", "Renewal"),
                Arguments.of(
                        MutantKits.LeaseRoundedDownToSeconds.class,
                        "Expiry",
                        "fractionalLeaseKeepsTheLockWhileValid",
                        "Expiry"),
                Arguments.of(
                        MutantKits.ReleaseChecksTheClientNotTheLease.class,
                        "Ownership",
                        "staleReleaseOnTheSameClientLeavesTheNewLeaseHeld",
                        "Ownership"),
                Arguments.of(
                        MutantKits.InspectRemainingInSeconds.class, "Inspect", "inspectAgreesWithTheLock", "Inspect"),
                Arguments.of(
                        MutantKits.InspectIgnoresExpiry.class, "Inspect", "inspectShowsAnExpiredLockFree", "Inspect"),
                Arguments.of(MutantKits.ZeroWaitSleepsAPoll.class, "Waiting", "zeroWaitTriesOnce", "Waiting"),
                Arguments.of(MutantKits.LostLate.class, "Loss", "lostCompletesOnExpiry", "Loss signal"),
                Arguments.of(
                        MutantKits.ExtendUnreachableExtendsLocally.class,
                        "Partition",
                        "extendWhileUnreachableKeepsTheOldValidity",
                        "Fault: client/server partition"),
                Arguments.of(
                        MutantKits.ReleaseUnreachableKeepsTheLease.class,
                        "Partition",
                        "releaseWhileUnreachableEndsTheLeaseAndTheLockByItsLeaseTime",
                        "Fault: client/server partition"),
                Arguments.of(
                        MutantKits.InspectAcceptsInvalidNames.class,
                        "Inspect",
                        "inspectRejectsInvalidNames",
                        "Inspect"),
                Arguments.of(
                        MutantKits.PredictableTokens.class, "Ownership", "ownerTokensAreUnpredictable", "Ownership"),
                Arguments.of(
                        MutantKits.JavaUtilRandomTokens.class, "Ownership", "ownerTokensAreUnpredictable", "Ownership"),
                Arguments.of(
                        MutantKits.AbandonNothing.class, "RepliesLost", "lostReplyLeavesNoLock", "Fault: replies lost"),
                Arguments.of(
                        MutantKits.RetryNotIdempotent.class,
                        "RepliesLost",
                        "lostReplyLeavesNoLock",
                        "Fault: replies lost"),
                Arguments.of(MutantKits.ValidityFromReply.class, "Expiry", "validityCountsFromTheRequest", "Expiry"),
                Arguments.of(
                        MutantKits.RenewalGivesUpAfterOneError.class,
                        "Renewal",
                        "autoRenewalSurvivesATransientFailure",
                        "Renewal"),
                Arguments.of(MutantKits.RenewsTooLate.class, "Renewal", "autoRenewalRenewsEarlyEnough", "Renewal"),
                Arguments.of(
                        MutantKits.ReleaseFreesEveryLockOfTheClient.class,
                        "ModelBasedSequences",
                        "",
                        "Model-based sequences"),
                // Not ReleaseWithoutOwnerCheck here: the runtime disposes of a lease's handle one lease
                // time after it expired, so the sequences' late release never reaches that mutant's
                // backend; the Ownership group catches it.
                Arguments.of(MutantKits.NoExpiry.class, "ModelBasedSequences", "", "Model-based sequences"));
    }

    /** The reference's outcome per selection: the control runs once however many mutants share it. */
    private static final Map<String, Outcome> CONTROLS = new ConcurrentHashMap<>();

    @ParameterizedTest(name = "{0} fails \"{3}\" {2}")
    @MethodSource("mutants")
    @DisplayName("a broken provider fails the group that checks the promise it breaks; the reference passes it")
    void theKitCatchesTheMutant(Class<?> mutant, String group, String method, String displayName)
            throws ClassNotFoundException {
        Outcome broken = run(mutant, group, method);
        assertThat(broken.failedGroups())
                .as("groups failed by %s; failures: %s", mutant.getSimpleName(), broken.failures())
                .contains(displayName);

        Outcome control = CONTROLS.get(group + "#" + method);
        if (control == null) {
            control = run(MutantKits.Reference.class, group, method);
            CONTROLS.put(group + "#" + method, control);
        }
        assertThat(control.failures())
                .as("the reference provider in %s %s", displayName, method)
                .isEmpty();
        assertThat(control.succeeded())
                .as("tests the reference passed in %s %s", displayName, method)
                .isPositive();
    }

    @Test
    @DisplayName("every mutation is launched against the kit at least once")
    void everyMutationIsTried() {
        Set<String> tried =
                mutants().map(a -> ((Class<?>) a.get()[0]).getSimpleName()).collect(Collectors.toSet());
        for (BrokenProviders.Mutation m : BrokenProviders.Mutation.values()) {
            String name = Arrays.stream(m.name().toLowerCase(Locale.ROOT).split("_"))
                    .map(p -> Character.toUpperCase(p.charAt(0)) + p.substring(1))
                    .collect(Collectors.joining());
            assertThat(tried).as("mutant kits launched").contains(name);
        }
    }

    @Test
    @DisplayName(
            "a provider that claims FAIR but serves the last waiter first fails \"Fairness\"; a fair queue passes it")
    void theKitCatchesAFalseFairnessClaim() throws ClassNotFoundException {
        Outcome broken = run(MutantKits.ClaimsFairServesLastFirst.class, "Fairness", "");
        assertThat(broken.failedGroups())
                .as("groups failed by the last-first provider; failures: %s", broken.failures())
                .contains("Fairness");

        Outcome control = run(MutantKits.FairReference.class, "Fairness", "");
        assertThat(control.failures()).as("the fair queue in group Fairness").isEmpty();
        assertThat(control.succeeded()).as("tests the fair queue passed").isPositive();
    }

    @Test
    @DisplayName(
            "a failed fault test says the lease, the fault with its parameters and times, and each client's attempts")
    void aFailedFaultTestExplainsItself() throws ClassNotFoundException {
        Outcome broken = run(MutantKits.FailOpenWhenDown.class, "Partition", "");
        assertThat(broken.failures()).as("failures of the fail-open provider").isNotEmpty();
        String message = String.join("\n", broken.failures());
        assertThat(message)
                .containsPattern("lease \\d+ ms")
                .contains("injected PARTITION (the proxy stalls both ways)")
                .contains("ms after it was injected")
                .contains("attempts per client")
                .contains("holder:")
                .contains("bystander:")
                .containsPattern("ACQUIRE 'partition' OK in \\d+ ms, fence \\d+, valid until \\+\\d+ ms");
    }

    @Test
    @DisplayName(
            "a provider that declares a clock drift but grants the whole lease fails \"Fault: clocks\"; one that leaves the drift passes it")
    void theKitCatchesAHolderThatIgnoresClockDrift() throws ClassNotFoundException {
        try {
            String method = "slowHolderWithinTheDeclaredDriftNeverOverlaps";
            Outcome broken = run(MutantKits.IgnoresDrift.class, "Clock", method);
            assertThat(broken.failedGroups())
                    .as("groups failed by the provider that ignores drift; failures: %s", broken.failures())
                    .contains("Fault: clocks");
            assertThat(String.join("\n", broken.failures())).contains("OVERLAPPING_HOLDS");

            Outcome control = run(MutantKits.RespDriftReference.class, "Clock", "");
            assertThat(control.failures())
                    .as("the provider that leaves the drift, in Fault: clocks")
                    .isEmpty();
            assertThat(control.succeeded()).as("clock tests it passed").isEqualTo(3);
        } finally {
            MutantKits.RespDriftKit.stopRedis();
        }
    }

    @Test
    @DisplayName(
            "on a server restarted on a fast clock, a provider that grants the whole lease despite its declared drift, or whose fences restart with each entry, fails \"Fault: clocks\"; the same fixture without the bug passes all five checks")
    void theKitCatchesAProviderThatAFastServerClockBreaks() throws ClassNotFoundException {
        try {
            Outcome ignoresDrift = run(
                    MutantKits.ClockStoreIgnoresDrift.class, "Clock", "fastServerWithinTheDeclaredDriftNeverOverlaps");
            assertThat(ignoresDrift.failedGroups())
                    .as("groups failed by the clock store that ignores drift; failures: %s", ignoresDrift.failures())
                    .contains("Fault: clocks");
            assertThat(String.join("\n", ignoresDrift.failures())).contains("OVERLAPPING_HOLDS");

            Outcome fencePerKey = run(
                    MutantKits.ClockStoreFencePerKey.class,
                    "Clock",
                    "fastServerBeyondTheDeclaredDriftIsStoppedByFences");
            assertThat(fencePerKey.failedGroups())
                    .as("groups failed by the clock store whose fences restart; failures: %s", fencePerKey.failures())
                    .contains("Fault: clocks");

            Outcome control = run(MutantKits.ClockStoreReference.class, "Clock", "");
            assertThat(control.failures())
                    .as("the clock store without a bug, in Fault: clocks")
                    .isEmpty();
            assertThat(control.succeeded()).as("clock tests it passed").isEqualTo(5);
        } finally {
            MutantKits.ClockStoreKit.stopServer();
        }
    }

    @Test
    @DisplayName(
            "a compare-and-swap store that compares wall clocks without declaring the offset, or without allowing the offset it declares, fails \"Fault: clocks\"; one that allows it passes all five checks")
    void theKitCatchesAProviderThatAnOffsetWallClockBreaks() throws ClassNotFoundException {
        try {
            String method = "contenderWithAnOffsetWallClockWaitsForTheLease";
            for (Class<?> mutant :
                    List.of(MutantKits.ClockStoreOffsetUndeclared.class, MutantKits.ClockStoreOffsetNotAllowed.class)) {
                Outcome broken = run(mutant, "Clock", method);
                assertThat(broken.failedGroups())
                        .as("groups failed by %s; failures: %s", mutant.getSimpleName(), broken.failures())
                        .contains("Fault: clocks");
                assertThat(String.join("\n", broken.failures())).contains("OVERLAPPING_HOLDS");
            }

            Outcome control = run(MutantKits.ClockStoreWallReference.class, "Clock", "");
            assertThat(control.failures())
                    .as("the clock store that allows the offset it declares, in Fault: clocks")
                    .isEmpty();
            assertThat(control.succeeded()).as("clock tests it passed").isEqualTo(5);
        } finally {
            MutantKits.ClockStoreKit.stopServer();
        }
    }

    private record Outcome(Set<String> failedGroups, List<String> failures, int succeeded) {}

    private static Outcome run(Class<?> kit, String group, String method) throws ClassNotFoundException {
        Class<?> nested = Class.forName(LockProviderCompatibilityKit.class.getName() + "$" + group);
        DiscoverySelector selector;
        if (method.isEmpty()) {
            selector = selectNestedClass(List.of(kit), nested);
        } else {
            Method target = Arrays.stream(nested.getDeclaredMethods())
                    .filter(m -> m.getName().equals(method))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no method " + method + " in " + nested));
            String parameters = Arrays.stream(target.getParameterTypes())
                    .map(Class::getName)
                    .collect(Collectors.joining(","));
            selector = selectNestedMethod(List.of(kit), nested, method, parameters);
        }
        LauncherDiscoveryRequest request =
                LauncherDiscoveryRequestBuilder.request().selectors(selector).build();
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
