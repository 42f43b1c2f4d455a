package io.lockstep.internal;

import io.lockstep.LossReason;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A lease's {@code lost()} stage: completed once, always on the runtime's callback executor, so that
 * user callbacks never run on the thread that ended the lease (the scheduler, a renewal, a backend's
 * event thread, a provider's close).
 */
final class LossSignal {

    private final Executor callbacks;
    private final AtomicBoolean fired = new AtomicBoolean();
    private final CompletableFuture<LossReason> stage = new CompletableFuture<>();

    LossSignal(Executor callbacks) {
        this.callbacks = callbacks;
    }

    /** Completes the stage with {@code reason} unless it was fired before; never blocks. */
    void fire(LossReason reason) {
        if (!fired.compareAndSet(false, true)) {
            return;
        }
        try {
            callbacks.execute(() -> stage.complete(reason));
        } catch (RejectedExecutionException shutDown) {
            // The user shut the callback executor down: better their callbacks here than never.
            stage.complete(reason);
        }
    }

    CompletionStage<LossReason> stage() {
        return stage.minimalCompletionStage();
    }
}
