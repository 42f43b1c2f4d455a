package io.lockstep.spring.integration;

import java.util.function.Consumer;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;

/** A leadership candidate that reports {@code GRANTED <id> <fence>} and {@code REVOKED <id>} lines. */
final class RecordingCandidate implements Candidate {

    private final String id;
    private final String role;
    private final LockstepLockRegistry registry;
    private final Consumer<String> out;

    RecordingCandidate(String id, String role, LockstepLockRegistry registry, Consumer<String> out) {
        this.id = id;
        this.role = role;
        this.registry = registry;
        this.out = out;
    }

    @Override
    public String getRole() {
        return role;
    }

    @Override
    public String getId() {
        return id;
    }

    /** Runs on the initiator's thread, which holds the lock: the fence is its lease's. */
    @Override
    public void onGranted(Context context) {
        out.accept("GRANTED " + id + " " + registry.obtain(role).fencingToken().orElse(-1));
    }

    @Override
    public void onRevoked(Context context) {
        out.accept("REVOKED " + id);
    }
}
