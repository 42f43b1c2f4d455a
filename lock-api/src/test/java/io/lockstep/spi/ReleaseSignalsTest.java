package io.lockstep.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A subclass that wakes waiters of its own (lock-redis's queued waiters, found by the hash a grant notice
 * names them by) is told whenever every watch is woken: the subscription came up, dropped, or closed. A
 * waiter missing one of those wake-ups would sleep through a release it should have asked again for.
 */
@DisplayName("lock-api: release signals wake a subclass's own waiters with every watch")
class ReleaseSignalsTest {

    /** A subscription the test drives: each {@link #listen()} comes up, then ends when told to. */
    private static final class DrivenSignals extends ReleaseSignals {
        final AtomicInteger listens = new AtomicInteger();
        final BlockingQueue<String> ownWakeups = new LinkedBlockingQueue<>();
        final BlockingQueue<RuntimeException> drops = new LinkedBlockingQueue<>();

        DrivenSignals() {
            super("test-releases", "a test", Duration.ofMillis(50), Duration.ofSeconds(30), Duration.ofSeconds(5));
        }

        @Override
        protected void listen() {
            listens.incrementAndGet();
            listening();
            try {
                throw drops.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // close() interrupts the subscribing thread
            }
        }

        @Override
        protected void wakeOwnWaiters() {
            ownWakeups.add("woken");
        }

        void openOwnWaiter() {
            subscribe();
        }
    }

    private final DrivenSignals signals = new DrivenSignals();

    @AfterEach
    void close() {
        signals.close();
    }

    @Test
    @DisplayName("subscribing starts the subscription, and its coming up wakes the subclass's waiters")
    void comingUpWakesOwnWaiters() throws Exception {
        signals.openOwnWaiter();

        assertThat(signals.listens.get()).isEqualTo(1); // subscribe() returned only once it was attempted
        assertThat(signals.ownWakeups.poll(30, TimeUnit.SECONDS)).isEqualTo("woken");
    }

    @Test
    @DisplayName("a dropped subscription wakes the subclass's waiters, and so does the next one coming up")
    void aDropWakesOwnWaiters() throws Exception {
        signals.openOwnWaiter();
        assertThat(signals.ownWakeups.poll(30, TimeUnit.SECONDS)).isEqualTo("woken"); // came up
        signals.ownWakeups.clear();

        signals.drops.add(new IllegalStateException("connection reset"));

        assertThat(signals.ownWakeups.poll(30, TimeUnit.SECONDS)).isEqualTo("woken"); // dropped
        assertThat(signals.ownWakeups.poll(30, TimeUnit.SECONDS)).isEqualTo("woken"); // up again
        assertThat(signals.listens.get()).isEqualTo(2);
    }

    @Test
    @DisplayName("closing wakes the subclass's waiters, and a watch too")
    void closingWakesOwnWaitersAndWatches() throws Exception {
        signals.openOwnWaiter();
        ReleaseWatch watch = signals.watch("lock");
        assertThat(signals.ownWakeups.poll(30, TimeUnit.SECONDS)).isEqualTo("woken");
        signals.ownWakeups.clear();
        watch.await(Duration.ZERO); // the wake-up of the subscription coming up, if it came after the watch
        CountDownLatch watchWoken = new CountDownLatch(1);
        Thread waiting = new Thread(() -> {
            try {
                if (watch.await(Duration.ofSeconds(30))) {
                    watchWoken.countDown();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiting.start();

        signals.close();

        assertThat(signals.ownWakeups.poll(30, TimeUnit.SECONDS)).isEqualTo("woken");
        assertThat(watchWoken.await(30, TimeUnit.SECONDS)).isTrue();
        waiting.join(30_000);
    }
}
