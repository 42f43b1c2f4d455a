package io.lockstep.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The numbered queue keys of lock-etcd: lowest free first, given back only by the attempt that claims them. */
@DisplayName("lock-etcd: queue slots")
class QueueSlotsTest {

    private final QueueSlots slots = new QueueSlots();

    @Test
    @DisplayName("each attempt on a lock gets the lowest free slot; other locks count on their own")
    void lowestFreeSlotFirst() {
        assertThat(slots.claim("a", "t1")).isZero();
        assertThat(slots.claim("a", "t2")).isEqualTo(1);
        assertThat(slots.claim("a", "t3")).isEqualTo(2);
        assertThat(slots.claim("b", "t4")).isZero();
        slots.free("a", 1, "t2");
        assertThat(slots.claim("a", "t5")).as("the freed slot is reused").isEqualTo(1);
        assertThat(slots.claim("a", "t6")).isEqualTo(3);
    }

    @Test
    @DisplayName("a slot is freed only by the attempt that claims it, so a second confirmation frees nothing")
    void onlyTheClaimerFrees() {
        int first = slots.claim("a", "t1");
        slots.free("a", first, "t1");
        int again = slots.claim("a", "t2");
        assertThat(again).isEqualTo(first);
        slots.free("a", first, "t1"); // a late, second confirmation of t1's removal
        assertThat(slots.isClaimed("a", again, "t2")).isTrue();
        assertThat(slots.claim("a", "t3")).as("t2 still has slot 0").isEqualTo(1);
        slots.free("a", 7, "t2"); // a slot that was never claimed
        assertThat(slots.isClaimed("a", again, "t2")).isTrue();
    }

    @Test
    @DisplayName("a lock with no claimed slot keeps nothing in memory")
    void emptyLocksAreForgotten() {
        slots.claim("a", "t1");
        slots.claim("a", "t2");
        slots.claim("b", "t3");
        slots.free("a", 0, "t1");
        assertThat(slots.locks()).isEqualTo(2);
        slots.free("a", 1, "t2");
        slots.free("b", 0, "t3");
        assertThat(slots.locks()).isZero();
        assertThat(slots.isClaimed("a", 0, "t1")).isFalse();
    }

    @Test
    @DisplayName("slots are counted right while a lock's claims grow past one and shrink back to slot 0 alone")
    void growAndShrink() {
        assertThat(slots.claim("a", "t1")).isZero();
        assertThat(slots.claim("a", "t2")).isEqualTo(1);
        slots.free("a", 1, "t2");
        assertThat(slots.isClaimed("a", 0, "t1")).isTrue();
        assertThat(slots.isClaimed("a", 1, "t2")).isFalse();
        assertThat(slots.claim("a", "t3")).isEqualTo(1);
        slots.free("a", 0, "t1");
        assertThat(slots.isClaimed("a", 1, "t3")).isTrue();
        assertThat(slots.claim("a", "t4")).as("slot 0 is free again").isZero();
        slots.free("a", 1, "t3");
        slots.free("a", 1, "t3");
        assertThat(slots.isClaimed("a", 0, "t4")).isTrue();
        assertThat(slots.claim("a", "t5")).isEqualTo(1);
        slots.free("a", 0, "t4");
        slots.free("a", 1, "t5");
        assertThat(slots.locks()).isZero();
    }

    @Test
    @DisplayName("attempts claiming and freeing on one lock at once never share a slot")
    void concurrentClaimsNeverShare() throws Exception {
        Map<Integer, String> inUse = new ConcurrentHashMap<>();
        List<String> clashes = Collections.synchronizedList(new ArrayList<>());
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < 2_000; i++) {
                        String token = thread + "-" + i;
                        int slot = slots.claim("a", token);
                        String before = inUse.putIfAbsent(slot, token);
                        if (before != null || slot >= threads) {
                            clashes.add(token + " got slot " + slot + " held by " + before);
                        }
                        inUse.remove(slot, token);
                        slots.free("a", slot, token);
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(clashes).isEmpty();
        assertThat(slots.locks()).isZero();
    }
}
