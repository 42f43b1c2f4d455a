package io.lockstep.internal;

import io.lockstep.LossReason;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A lease's {@code lost()} stage, completed once. An end that Lockstep's own threads detect (the
 * scheduler, a renewal, a backend's event thread, a provider's close) completes it on the runtime's
 * callback executor, so user callbacks never run on a timing thread; an end the user causes with
 * {@code release()} completes it on the user's thread before that call returns.
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

    /** Completes the stage with {@code reason} on the calling thread (a user's), unless fired before. */
    void fireOnCaller(LossReason reason) {
        if (fired.compareAndSet(false, true)) {
            stage.complete(reason);
        }
    }

    CompletionStage<LossReason> stage() {
        return stage.minimalCompletionStage();
    }
}
