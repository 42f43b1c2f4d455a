package io.lockstep.internal;

import io.lockstep.LossReason;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A lease's {@code lost()} stage: completed once, and every stage handed out by {@link #stage()} completes
 * on the runtime's callback executor, so that user callbacks never run on the thread that ended the
 * lease (the scheduler, a renewal, a backend's event thread, a provider's close).
 *
 * <p>Firing completes an internal future on the calling thread; only the stages handed out hop to the
 * callback executor. So a lease nobody asked {@code lost()} of (most leases: acquire, work, release)
 * ends without waking a callback thread, which on a small machine costs as much as a round trip.
 */
final class LossSignal {

    private final Executor callbacks;
    private final AtomicBoolean fired = new AtomicBoolean();
    /** Completed on the firing thread; its only dependents are the asynchronous stages of {@link #stage()}. */
    private final CompletableFuture<LossReason> reason = new CompletableFuture<>();

    LossSignal(Executor callbacks) {
        this.callbacks = callbacks;
    }

    /** Completes the stage with {@code reason} unless it was fired before; never blocks, runs no user code. */
    void fire(LossReason lossReason) {
        if (fired.compareAndSet(false, true)) {
            reason.complete(lossReason);
        }
    }

    /**
     * A stage that completes with the reason on the callback executor (or, if the user shut that
     * executor down, on the thread that fired: better their callbacks there than never). Callbacks
     * added after it completed run where they are added, as with any completed stage.
     */
    CompletionStage<LossReason> stage() {
        if (reason.isDone()) {
            return reason.minimalCompletionStage(); // complete already: nothing will run on the firing thread
        }
        return reason.thenApplyAsync(r -> r, this::onCallbackExecutor).minimalCompletionStage();
    }

    private void onCallbackExecutor(Runnable task) {
        try {
            callbacks.execute(task);
        } catch (RejectedExecutionException shutDown) {
            task.run();
        }
    }
}
