package io.lockstep.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Which replies to a waiter's {@code BLPOP} turn its provider's lane off for good and which only for a
 * while (the replies are Redis 7's own texts). A refused lane costs every later waiter the fast delivery,
 * so a passing state (a failover, a busy or loading server, a moving slot) must not refuse it.
 */
@DisplayName("GrantLane: which BLPOP replies turn the lane off for good")
class GrantLaneTest {

    @Test
    @DisplayName("no permission, a command renamed away, a timeout an old server cannot read: off for good")
    void refusals() {
        assertThat(GrantLane.refusedForGood(new JedisAccessControlException(
                        "NOPERM User app has no permissions to run the 'blpop' command")))
                .isTrue();
        assertThat(GrantLane.refusedForGood(
                        new JedisDataException("ERR unknown command 'BLPOP', with args beginning with: 'k' '0.5' ")))
                .isTrue();
        assertThat(GrantLane.refusedForGood(new JedisDataException("ERR timeout is not an integer or out of range")))
                .isTrue();
    }

    @Test
    @DisplayName("a failover's READONLY, BUSY, LOADING, a moving slot, too many clients: only suspended")
    void passingStates() {
        for (String reply : new String[] {
            "READONLY You can't write against a read only replica.",
            "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
            "LOADING Redis is loading the dataset in memory",
            "TRYAGAIN Multiple keys request during rehashing of slot",
            "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
            "ERR max number of clients reached",
            "WRONGTYPE Operation against a key holding the wrong kind of value"
        }) {
            assertThat(GrantLane.refusedForGood(new JedisDataException(reply)))
                    .as(reply)
                    .isFalse();
        }
    }
}
