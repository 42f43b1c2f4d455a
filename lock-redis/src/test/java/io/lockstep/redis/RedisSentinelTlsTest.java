package io.lockstep.redis;

import io.lockstep.tck.servers.RedisSentinelSetup;
import io.lockstep.tck.servers.RedisTls;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

@DisplayName("rediss-sentinel:// (TLS on a Sentinel setup: 1 primary, 2 replicas, 3 sentinels)")
class RedisSentinelTlsTest extends TopologyTlsChecks {

    private static RedisTls tls;
    private static RedisSentinelSetup redis;

    @BeforeAll
    static void start() {
        tls = RedisTls.selfSigned();
        redis = RedisSentinelSetup.startTls(tls);
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
