package io.lockstep.shedlock;

import io.lockstep.Lease;
import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * The ShedLock handle of one hold: single use, as ShedLock's {@link AbstractSimpleLock} requires ({@code
 * unlock} or {@code extend} once, then {@link IllegalStateException}).
 */
final class LockstepSimpleLock extends AbstractSimpleLock {

    private final Hold hold;
    private final long startedAt;
    private volatile boolean active = true;

    LockstepSimpleLock(LockConfiguration configuration, Hold hold, long startedAt) {
        super(configuration);
        this.hold = hold;
        this.startedAt = startedAt;
    }

    Lease lease() {
        return hold.lease();
    }

    /** True until this handle is unlocked or extended. */
    boolean isActive() {
        return active;
    }

    @Override
    protected void doUnlock() {
        active = false;
        LockstepShedLock.unbind(this);
        hold.unlock(startedAt + lockConfiguration.getLockAtLeastFor().toNanos());
    }

    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
        long extendedAt = System.nanoTime();
        boolean extendedLease = hold.extend(extendedAt, newConfiguration);
        active = false;
        if (!extendedLease) {
            LockstepShedLock.unbind(this);
            return Optional.empty();
        }
        LockstepSimpleLock extended = new LockstepSimpleLock(newConfiguration, hold, extendedAt);
        LockstepShedLock.replace(this, extended);
        return Optional.of(extended);
    }

    @Override
    public String toString() {
        return "LockstepSimpleLock[" + lockConfiguration.getName() + "]";
    }
}
