package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.Timing;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("lock-redis against a stalled (SIGSTOP) server")
class RedisStalledServerTest {

    private static final Timing TIMING = Timing.fromSystemProperty();
    private static final Duration TIMEOUT = Duration.ofMillis(250);
    private static final int THREADS = 24;

    private RedisServer redis;

    @BeforeEach
    void start() {
        redis = RedisServer.start();
    }

    @AfterEach
    void stop() {
        redis.resume();
        redis.close();
    }

    @Test
    @DisplayName("many callers on a small pool each fail closed within their own bound, not queued behind each other")
    void everyCallerIsBounded() throws Exception {
        // Per call: 3 attempts and an abandon, each at most a pool wait plus a socket timeout, plus the
        // retry backoff. Queued on the pool without maxWait, the slowest caller would wait for all others:
        // 24 callers x 4 calls x 250 ms over 2 connections = 12 s.
        Duration bound = TIMING.scaled(TIMEOUT.multipliedBy(4 * 2)).plus(TIMING.millis(1_500));
        try (LockProvider locks = Locks.open(redis.uri() + "?timeout=" + TIMEOUT.toMillis() + "ms&poolSize=2")) {
            locks.tryAcquire("warm", LeaseOptions.of(Duration.ofSeconds(5)))
                    .orElseThrow()
                    .release();
            redis.pause();
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Duration>> calls = new ArrayList<>();
                for (int i = 0; i < THREADS; i++) {
                    String name = "stalled-" + i;
                    calls.add(pool.submit(() -> {
                        go.await();
                        long start = System.nanoTime();
                        try {
                            locks.tryAcquire(name, LeaseOptions.of(Duration.ofSeconds(5)));
                            throw new AssertionError("acquired '" + name + "' from a stalled server");
                        } catch (BackendUnavailableException expected) {
                            return Duration.ofNanos(System.nanoTime() - start);
                        }
                    }));
                }
                go.countDown();
                List<Duration> took = new ArrayList<>();
                for (Future<Duration> call : calls) {
                    took.add(call.get(60, TimeUnit.SECONDS));
                }
                took.sort(null);
                System.out.printf(
                        "%d callers, poolSize=2, timeout=%s, stalled server: fastest %d ms, median %d ms, slowest %d ms%n",
                        THREADS,
                        TIMEOUT,
                        took.get(0).toMillis(),
                        took.get(THREADS / 2).toMillis(),
                        took.get(THREADS - 1).toMillis());
                assertThat(took).as("each caller's time, bound %s", bound).allMatch(d -> d.compareTo(bound) < 0);
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
