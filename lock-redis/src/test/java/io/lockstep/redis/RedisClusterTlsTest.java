package io.lockstep.redis;

import io.lockstep.tck.servers.RedisClusterSetup;
import io.lockstep.tck.servers.RedisTls;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("rediss-cluster:// (TLS on a 3+3 Redis Cluster)")
class RedisClusterTlsTest extends TopologyTlsChecks {

    private static RedisTls tls;
    private static RedisClusterSetup redis;

    @BeforeAll
    static void start() {
        tls = RedisTls.selfSigned();
        redis = RedisClusterSetup.startTls(tls);
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    String uri() {
        return redis.uri();
    }

    @Override
    RedisTls tls() {
        return tls;
    }
}
