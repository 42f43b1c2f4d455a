package io.lockstep.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The coarse timers of lock-etcd's held grants: never early, each item once, removed items never. */
@DisplayName("lock-etcd: expiry ticks")
class ExpiryTicksTest {

    private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    @Test
    @DisplayName("an item is handed over no earlier than its time, with the tick that held it")
    void neverEarly() throws InterruptedException {
        Map<String, Long> handedAt = new ConcurrentHashMap<>();
        Map<String, Long> handedTick = new ConcurrentHashMap<>();
        CountDownLatch done = new CountDownLatch(3);
        ExpiryTicks<String> ticks = new ExpiryTicks<>(scheduler, System::nanoTime, (item, tick) -> {
            handedAt.put(item, System.nanoTime());
            handedTick.put(item, tick);
            done.countDown();
        });
        long now = System.nanoTime();
        Map<String, Long> at = Map.of("a", now, "b", now + 25_000_000L, "c", now + 60_000_000L);
        Map<String, Long> tickOf = new ConcurrentHashMap<>();
        at.forEach((item, time) -> tickOf.put(item, ticks.add(item, time)));

        assertThat(done.await(10, TimeUnit.SECONDS))
                .as("every item handed over")
                .isTrue();
        at.forEach((item, time) -> {
            assertThat(handedAt.get(item)).as("when %s was handed over", item).isGreaterThanOrEqualTo(time);
            assertThat(handedTick.get(item)).as("the tick of %s", item).isEqualTo(tickOf.get(item));
        });
        assertThat(ticks.size()).isZero();
    }

    @Test
    @DisplayName("a removed item is never handed over; the others of its tick are")
    void removedNever() throws InterruptedException {
        List<String> handed = new ArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        ExpiryTicks<String> ticks = new ExpiryTicks<>(scheduler, System::nanoTime, (item, tick) -> {
            synchronized (handed) {
                handed.add(item);
            }
            if (item.equals("kept")) {
                done.countDown();
            }
        });
        long at = System.nanoTime() + 50_000_000L;
        long tick = ticks.add("removed", at);
        assertThat(ticks.add("kept", at)).isEqualTo(tick);
        ticks.remove("removed", tick);

        assertThat(done.await(10, TimeUnit.SECONDS))
                .as("the kept item handed over")
                .isTrue();
        synchronized (handed) {
            assertThat(handed).containsExactly("kept");
        }
    }

    @Test
    @DisplayName("items added from many threads while ticks fire are each handed over exactly once")
    void concurrentAddsEachOnce() throws InterruptedException {
        int threads = 4;
        int perThread = 5_000;
        Map<Integer, AtomicInteger> handed = new ConcurrentHashMap<>();
        CountDownLatch done = new CountDownLatch(threads * perThread);
        ExpiryTicks<Integer> ticks = new ExpiryTicks<>(scheduler, System::nanoTime, (item, tick) -> {
            handed.computeIfAbsent(item, i -> new AtomicInteger()).incrementAndGet();
            done.countDown();
        });
        List<Thread> adders = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t * perThread;
            Thread adder = new Thread(() -> {
                for (int i = first; i < first + perThread; i++) {
                    // Due now or within a few ticks: adds land in ticks that are firing.
                    ticks.add(i, System.nanoTime() + (i % 5) * ExpiryTicks.TICK_NANOS / 2);
                }
            });
            adder.start();
            adders.add(adder);
        }
        for (Thread adder : adders) {
            adder.join();
        }

        assertThat(done.await(20, TimeUnit.SECONDS))
                .as("every item handed over")
                .isTrue();
        assertThat(handed).hasSize(threads * perThread);
        assertThat(handed.values()).allMatch(n -> n.get() == 1, "handed over once");
    }
}
