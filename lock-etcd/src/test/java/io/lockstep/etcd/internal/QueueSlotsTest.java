package io.lockstep.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;

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
}
