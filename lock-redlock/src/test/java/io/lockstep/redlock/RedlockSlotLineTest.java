package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A caller in line for a slot of a slow node holds no slot of the healthy nodes meanwhile, so the
 * other callers' calls to the healthy nodes never fail OVERLOADED because of it.
 *
 * <p>One slot per node, and one of three nodes paused with the longest node timeout (10 s), so it is
 * not suspected while the test runs: the caller that gets its one slot waits 10 s for an answer, and
 * every other caller finds that slot busy and stands in line for it. Before the fix, a caller in that
 * line kept the healthy nodes' slots for the whole second of its wait, and a second caller in line
 * behind it on a healthy node ran out of its own second there and missed the quorum.
 */
@DisplayName("Redlock: a caller in line for a slow node's slot holds no healthy node's slot")
class RedlockSlotLineTest {

    private static final int CALLERS = 4;

    @Test
    @DisplayName("4 zero-wait callers, one slot per node, one of three nodes paused: every caller gets its lock")
    void aCallerInLineForASlowNodeKeepsNoOtherNodesSlot() throws Exception {
        try (RedisNodes nodes = RedisNodes.start(3);
                RedisNodes.Client client = nodes.client(RedlockOptions.defaults()
                        .withNodeTimeout(Duration.ofSeconds(10))
                        .withMaxInFlight(1))) {
            client.provider()
                    .tryAcquire("warm", LeaseOptions.of(Duration.ofSeconds(30)))
                    .orElseThrow()
                    .release();
            nodes.pause(2);
            ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Optional<Lease>>> attempts = new ArrayList<>();
            try {
                for (int c = 0; c < CALLERS; c++) {
                    String name = "line-" + c;
                    attempts.add(callers.submit(() -> {
                        start.await();
                        // A zero wait: one attempt, so an OVERLOADED node in it cannot be made up by a retry.
                        return client.provider().tryAcquire(name, LeaseOptions.of(Duration.ofSeconds(30)));
                    }));
                }
                start.countDown();
                List<Lease> granted = new ArrayList<>();
                for (Future<Optional<Lease>> attempt : attempts) {
                    attempt.get(60, TimeUnit.SECONDS).ifPresent(granted::add);
                }
                assertThat(granted).as("callers granted their lock").hasSize(CALLERS);
                granted.forEach(Lease::release);
            } finally {
                callers.shutdownNow();
                nodes.resume(2);
            }
        }
    }
}
