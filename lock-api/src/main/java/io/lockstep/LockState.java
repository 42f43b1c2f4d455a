package io.lockstep;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a backend can tell about a lock at one moment, for operators ({@code lockctl inspect}): whether
 * it is held, the holder's fencing token and how long until the backend frees it. A snapshot, stale as
 * soon as it is returned; never use it to decide whether to take a lock. The owner token is never part
 * of it (it is the holder's secret).
 *
 * @param held whether the lock is held now
 * @param fencingToken the holder's fence (or the last issued fence, for a free lock) where the backend keeps one
 * @param remaining how long until the backend frees the lock unless it is renewed, where it can tell
 */
public record LockState(boolean held, OptionalLong fencingToken, Optional<Duration> remaining) {

    /** Checks the fields. */
    public LockState {
        Objects.requireNonNull(fencingToken, "fencingToken");
        Objects.requireNonNull(remaining, "remaining");
        if (!held && remaining.isPresent()) {
            throw new IllegalArgumentException("remaining must be empty for a free lock, was " + remaining.get());
        }
    }
}
