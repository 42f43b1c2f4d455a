package io.lockstep.examples.booking;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

class DoubleBookingTest {

    @Test
    @DisplayName("the scenario double-books without a lock, books once with one, and fences off the paused holder")
    void scenarioKeepsItsPromises() throws Exception {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        try (RedisServer server = RedisServer.start();
                LockProvider locks = Locks.open(server.uri());
                JedisPooled redis = new JedisPooled(server.host(), server.port())) {
            boolean ok = new DoubleBooking(locks, redis, new PrintStream(buffer, true, StandardCharsets.UTF_8)).run();
            String output = buffer.toString(StandardCharsets.UTF_8);
            assertThat(ok).as(output).isTrue();
            assertThat(output)
                    .contains("without a lock DOUBLE-BOOKED")
                    .contains("with Lockstep one booking")
                    .contains("rejected by the fence");
        }
    }
}
