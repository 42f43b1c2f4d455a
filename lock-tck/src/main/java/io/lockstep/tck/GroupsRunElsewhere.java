package io.lockstep.tck;

import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Nested;

/**
 * Kit groups that a variant class of a backend leaves to another kit class of the same backend, because
 * the variant changes nothing they check: {@link LockProviderCompatibilityKit#groupsRunElsewhere()}
 * returns it, and each test of those groups is reported disabled, naming {@code runIn}, before a provider
 * is opened for it. The named class must run the groups itself.
 *
 * <p>Two cuts cover the variants seen so far: {@link #faultFree} for a variant that differs only in what
 * happens under faults and restarts (a persistent Redlock, whose nodes keep their keys across a restart),
 * and {@link #faults} for a variant that differs only in its data, not in its protocol (the same SQL over
 * a hand-made table). A variant that answers differently without a fault (another client, a cluster whose
 * followers may answer reads) keeps every group.
 *
 * @param runIn the kit class that runs the groups
 * @param groups the groups, by the simple names of the kit's nested classes ({@code Names}, {@code Partition})
 */
public record GroupsRunElsewhere(Class<? extends LockProviderCompatibilityKit> runIn, Set<String> groups) {

    /** The groups that inject no fault into the backend and start no holder in a child JVM. */
    public static final Set<String> FAULT_FREE = Set.of(
            "Info",
            "ModelBasedSequences",
            "Exclusion",
            "Ownership",
            "Fencing",
            "Waiting",
            "Fairness",
            "Loss",
            "BadInput",
            "ContentionFuzz",
            "Names",
            "Threads",
            "Closing");

    /**
     * The groups made of fault scenarios only (the clock group has its own hook, {@link
     * LockProviderCompatibilityKit#clockGroupRunsIn()}). Expiry, Renewal and Inspect mix a few fault
     * checks into checks without faults, so they are in neither set.
     */
    public static final Set<String> FAULTS = Set.of(
            "HolderPausedPastItsLease",
            "Partition",
            "ServerPaused",
            "ServerKilled",
            "HolderCrashed",
            "ContentionThroughAFault",
            "SessionExpired",
            "RepliesLost");

    /**
     * @throws NullPointerException if {@code runIn} or {@code groups} is null
     * @throws IllegalArgumentException if {@code groups} is empty or names something that is not a kit group
     */
    public GroupsRunElsewhere {
        Objects.requireNonNull(runIn, "runIn");
        Objects.requireNonNull(groups, "groups");
        if (groups.isEmpty()) {
            throw new IllegalArgumentException("groups must name at least one kit group, was empty");
        }
        Set<String> known = groupNames();
        for (String group : groups) {
            if (!known.contains(group)) {
                throw new IllegalArgumentException(
                        "groups must name kit groups " + known + "; '" + group + "' is not one");
            }
        }
        groups = Set.copyOf(groups);
    }

    /** The {@link #FAULT_FREE} groups run in {@code runIn}. */
    public static GroupsRunElsewhere faultFree(Class<? extends LockProviderCompatibilityKit> runIn) {
        return new GroupsRunElsewhere(runIn, FAULT_FREE);
    }

    /** The {@link #FAULTS} groups run in {@code runIn}. */
    public static GroupsRunElsewhere faults(Class<? extends LockProviderCompatibilityKit> runIn) {
        return new GroupsRunElsewhere(runIn, FAULTS);
    }

    /** The simple names of the kit's groups (its {@code @Nested} classes). */
    static Set<String> groupNames() {
        return Arrays.stream(LockProviderCompatibilityKit.class.getDeclaredClasses())
                .filter(c -> c.isAnnotationPresent(Nested.class))
                .map(Class::getSimpleName)
                .collect(Collectors.toCollection(TreeSet::new));
    }
}
