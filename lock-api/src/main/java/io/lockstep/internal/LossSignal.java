package io.lockstep.internal;

import io.lockstep.LossReason;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * A lease's {@code lost()} stage: completed once, and every stage handed out by {@link #stage()} completes
 * on the runtime's callback executor, so that user callbacks never run on the thread that ended the
 * lease (the scheduler, a renewal, a backend's event thread, a provider's close).
 *
 * <p>Firing records the reason, and completes an internal future on the calling thread if {@code lost()}
 * was asked for; only the stages handed out hop to the callback executor. So a lease nobody asked
 * {@code lost()} of (most leases: acquire, work, release) ends without waking a callback thread, which on
 * a small machine costs as much as a round trip, and holds no future while it lives.
 *
 * <p>Thread-safe: its fields are guarded by its monitor, held only to read or set them. Its lease uses
 * the same monitor as its state lock (an object no caller can reach: one object fewer per lease).
 */
final class LossSignal {

    private final Executor callbacks;

    /** The reason it fired with; null until then. Guarded by this. */
    private @Nullable LossReason fired;

    /**
     * Made when a stage is first asked for; completed on the firing thread; its only dependents are the
     * asynchronous stages of {@link #stage()}. Guarded by this.
     */
    private @Nullable CompletableFuture<LossReason> reason;

    LossSignal(Executor callbacks) {
        this.callbacks = callbacks;
    }

    /** Completes the stage with {@code reason} unless it was fired before; never blocks, runs no user code. */
    void fire(LossReason lossReason) {
        CompletableFuture<LossReason> asked;
        synchronized (this) {
            if (fired != null) {
                return;
            }
            fired = lossReason;
            asked = reason;
        }
        if (asked != null) {
            asked.complete(lossReason); // its dependents hop to the callback executor
        }
    }

    /**
     * A stage that completes with the reason on the callback executor (or, if the user shut that
     * executor down, on the thread that fired: better their callbacks there than never). Callbacks
     * added after it completed run where they are added, as with any completed stage.
     */
    CompletionStage<LossReason> stage() {
        CompletableFuture<LossReason> asked;
        synchronized (this) {
            if (reason == null) {
                reason = fired != null ? CompletableFuture.completedFuture(fired) : new CompletableFuture<>();
            }
            asked = reason;
        }
        if (asked.isDone()) {
            return asked.minimalCompletionStage(); // complete already: nothing will run on the firing thread
        }
        return asked.thenApplyAsync(r -> r, this::onCallbackExecutor).minimalCompletionStage();
    }

    private void onCallbackExecutor(Runnable task) {
        try {
            callbacks.execute(task);
        } catch (RejectedExecutionException shutDown) {
            task.run();
        }
    }
}
