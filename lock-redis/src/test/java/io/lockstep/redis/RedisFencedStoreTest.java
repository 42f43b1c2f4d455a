package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.tck.servers.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

class RedisFencedStoreTest {

    private static RedisServer redis;
    private static JedisPooled jedis;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        jedis = new JedisPooled(redis.host(), redis.port());
    }

    @AfterAll
    static void stop() {
        jedis.close();
        redis.close();
    }

    @Test
    @DisplayName("writes with a fence at least the last are accepted; older fences are rejected and change nothing")
    void staleFencesAreRejected() {
        RedisFencedStore store = new RedisFencedStore(jedis, redis.uri());
        assertThat(store.write("booking", 5, "Diana")).isTrue();
        assertThat(store.write("booking", 5, "Diana again"))
                .as("same holder writes twice")
                .isTrue();
        assertThat(store.write("booking", 4, "Charlie")).isFalse();
        assertThat(store.read("booking")).contains("Diana again");
        assertThat(store.lastFence("booking")).contains(5L);
        assertThat(store.write("booking", 6, "Eve")).isTrue();
        assertThat(store.read("absent")).isEmpty();
    }

    @Test
    @DisplayName("fences outside what Lua numbers hold exactly are rejected")
    void fenceRange() {
        RedisFencedStore store = new RedisFencedStore(jedis, redis.uri());
        assertThatThrownBy(() -> store.write("k", -1, "v"))
                .hasMessageContaining("fence")
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> store.write("k", 1L << 53, "v")).hasMessageContaining("fence");
    }
}
