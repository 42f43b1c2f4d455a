package io.lockstep.redis.internal;

import io.lockstep.LossReason;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * One primary's time in a Sentinel setup: hands out a failover signal per grant and completes them all
 * when the primary is replaced. Each signal is a future of its own, held here <em>weakly</em>: a grant's
 * handle (and the lease listening to it) keep it while the lease lives, and once they are gone it is
 * dropped. One future shared by every grant would instead collect a listener per lease ever granted
 * and keep them, and the leases they refer to, until the next failover, which may be months away.
 * Thread-safe.
 */
final class FailoverEpoch {

    /** The signals handed out and still referenced elsewhere; null once the epoch ended. */
    private @Nullable Set<CompletableFuture<LossReason>> signals = Collections.newSetFromMap(new WeakHashMap<>());

    /**
     * A signal that completes with {@link LossReason#NOT_HELD} when this epoch ends (at once if it has).
     * The caller must keep it as long as it wants to hear the failover.
     */
    synchronized CompletableFuture<LossReason> signal() {
        CompletableFuture<LossReason> signal = new CompletableFuture<>();
        if (signals == null) {
            signal.complete(LossReason.NOT_HELD);
        } else {
            signals.add(signal);
        }
        return signal;
    }

    /** Ends the epoch: completes every signal still referenced, outside the lock. Idempotent. */
    void end() {
        List<CompletableFuture<LossReason>> ending;
        synchronized (this) {
            if (signals == null) {
                return;
            }
            ending = new ArrayList<>(signals);
            signals = null;
        }
        for (CompletableFuture<LossReason> signal : ending) {
            signal.complete(LossReason.NOT_HELD);
        }
    }

    /** How many signals this epoch still holds (for tests): those not yet collected. */
    synchronized int signalsHeld() {
        return signals == null ? 0 : signals.size();
    }
}
