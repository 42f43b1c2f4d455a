package io.lockstep;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a backend can tell about a lock at one moment, for operators ({@code lockctl inspect}): whether
 * it is held, the holder's fencing token, how long until the backend frees it and who the holder is. A
 * snapshot, stale as soon as it is returned; never use it to decide whether to take a lock. The owner
 * token is never part of it (it is the holder's secret).
 *
 * @param held whether the lock is held now
 * @param fencingToken the holder's fence (or the last issued fence, for a free lock) where the backend keeps one
 * @param remaining how long until the backend frees the lock unless it is renewed, where it can tell
 * @param holder who holds it (host, pid, label) where the backend keeps that; empty for a free lock, for a
 *     holder that did not write it (an older client) and for backends that cannot keep it
 */
public record LockState(
        boolean held, OptionalLong fencingToken, Optional<Duration> remaining, Optional<Holder> holder) {

    /** Checks the fields. */
    public LockState {
        Objects.requireNonNull(fencingToken, "fencingToken");
        Objects.requireNonNull(remaining, "remaining");
        Objects.requireNonNull(holder, "holder");
        if (!held && remaining.isPresent()) {
            throw new IllegalArgumentException("remaining must be empty for a free lock, was " + remaining.get());
        }
        if (!held && holder.isPresent()) {
            throw new IllegalArgumentException("holder must be empty for a free lock, was " + holder.get());
        }
    }

    /** A state without the holder's identity: for backends that do not keep it. */
    public LockState(boolean held, OptionalLong fencingToken, Optional<Duration> remaining) {
        this(held, fencingToken, remaining, Optional.empty());
    }
}
