package io.lockstep.shedlock;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Runs releases at deadlines on one daemon thread, started on first use: the end of {@code lockAtLeastFor}
 * and the {@code lockAtMostFor} cap in keep-alive mode. A release is one backend round trip, bounded by the
 * backend's own timeout.
 */
final class ReleaseTimer {

    private @Nullable ScheduledThreadPoolExecutor executor; // guarded by this

    /** Runs {@code release} at {@code deadline}, a {@link System#nanoTime()} value. */
    ScheduledFuture<?> schedule(Runnable release, long deadline) {
        return executor().schedule(release, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    private synchronized ScheduledThreadPoolExecutor executor() {
        if (executor == null) {
            ScheduledThreadPoolExecutor created = new ScheduledThreadPoolExecutor(1, runnable -> {
                Thread thread = new Thread(runnable, "lockstep-shedlock-release");
                thread.setDaemon(true);
                return thread;
            });
            created.setRemoveOnCancelPolicy(true);
            executor = created;
        }
        return executor;
    }
}
