package io.lockstep.tck.history;

import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.Event.Type;
import java.util.Objects;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * A resource that protects itself with fencing tokens: it accepts a write only if the write's fence is
 * at least the highest fence it has seen, so a holder that paused past its lease and writes after a
 * newer holder is rejected. Each accepted write increments its value.
 *
 * <p>This is the check every real resource must make (a SQL {@code UPDATE ... WHERE fence <= ?}, a
 * Redis check-and-set script); the kit uses this in-memory one to see whether a provider's fences make
 * it possible. Thread-safe: writes are serialized.
 */
public final class FencedRegister {

    private final String name;
    private final @Nullable History history;
    private long highestFence = Long.MIN_VALUE;
    private long accepted;
    private long rejected;

    /** A register named {@code name} that records nothing. */
    public FencedRegister(String name) {
        this(name, null);
    }

    /**
     * A register named {@code name} that records every write in {@code history} ({@link Op#WRITE}, OK
     * when accepted, FAIL when rejected), at the moment it decides.
     */
    public FencedRegister(String name, @Nullable History history) {
        this.name = Objects.requireNonNull(name, "name");
        this.history = history;
    }

    /**
     * Writes with {@code fence} on behalf of {@code client}.
     *
     * @return true if accepted (the fence is at least the highest seen), false if rejected as stale
     */
    public synchronized boolean write(String client, long fence) {
        Objects.requireNonNull(client, "client");
        boolean ok = fence >= highestFence;
        if (ok) {
            highestFence = fence;
            accepted++;
        } else {
            rejected++;
        }
        if (history != null) {
            history.record(
                    client, name, Op.WRITE, ok ? Type.OK : Type.FAIL, OptionalLong.of(fence), OptionalLong.empty());
        }
        return ok;
    }

    /** The register's name (the lock or resource it stands for). */
    public String name() {
        return name;
    }

    /** How many writes were accepted: the register's value. */
    public synchronized long accepted() {
        return accepted;
    }

    /** How many writes were rejected as stale. */
    public synchronized long rejected() {
        return rejected;
    }

    /** The highest fence accepted so far, if any. */
    public synchronized OptionalLong highestFence() {
        return accepted == 0 ? OptionalLong.empty() : OptionalLong.of(highestFence);
    }

    @Override
    public synchronized String toString() {
        return "FencedRegister[" + name + ", accepted=" + accepted + ", rejected=" + rejected + ", highestFence="
                + (accepted == 0 ? "none" : Long.toString(highestFence)) + "]";
    }
}
