package io.lockstep.examples.scenarios;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.tck.servers.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Runs each scenario's body, as its main does, on a local redis-server; each must report its invariant held. */
class ScenariosTest {

    static RedisServer redis;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        redis.close();
    }

    @Test
    @DisplayName("a crashed holder keeps the lock until its TTL runs out, then the lock frees by itself")
    void crashedHolder() throws Exception {
        String out = run(CrashedHolder::run);
        assertThat(out).contains("the lock is still held", "the lock freed by its TTL");
    }

    @Test
    @DisplayName("a holder whose lease ran out cannot release its successor's lock")
    void stolenLockRelease() throws Exception {
        String out = run(StolenLockRelease::run);
        assertThat(out).contains("release() returned false", "C cannot take it");
    }

    @Test
    @DisplayName("a writer frozen past its lease is stopped by the fenced update at PostgreSQL")
    void gcPauseFencedAtTheDatabase() throws Exception {
        String out = run(GcPauseFencedAtTheDatabase::run);
        assertThat(out).contains("rejected by the database", "final balance 150");
    }

    @Test
    @DisplayName("when the job-queue leader dies, the other worker takes over and finishes every job exactly once")
    void jobQueueLeaderHandover() throws Exception {
        String out = run(JobQueueLeaderHandover::run);
        assertThat(out).contains("worker-2 leads", "0 completed twice");
    }

    private static String run(Scenario.Body body) throws Exception {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        boolean ok = body.run(redis.uri(), new PrintStream(buffer, true, StandardCharsets.UTF_8));
        String out = buffer.toString(StandardCharsets.UTF_8);
        assertThat(ok).as(out).isTrue();
        return out;
    }
}
