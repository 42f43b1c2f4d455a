package io.lockstep.spi;

import io.lockstep.MonotonicClock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A monotonic clock the test moves by hand. It can also hold one chosen thread inside its next reading,
 * to put a race's interleaving in a fixed order.
 */
final class ManualClock implements MonotonicClock {

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private volatile @Nullable Thread holdThread;
    final CountDownLatch held = new CountDownLatch(1);
    final CountDownLatch proceed = new CountDownLatch(1);

    @Override
    public long nanoTime() {
        if (Thread.currentThread() == holdThread) {
            holdThread = null;
            held.countDown();
            try {
                proceed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return now.get();
    }

    void advance(Duration by) {
        now.addAndGet(by.toNanos());
    }

    /** The next reading by {@code thread} waits until {@link #proceed} opens. */
    void holdNextReadingOf(Thread thread) {
        holdThread = thread;
    }
}
