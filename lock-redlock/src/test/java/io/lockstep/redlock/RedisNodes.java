package io.lockstep.redlock;

import io.lockstep.LockRuntime;
import io.lockstep.redlock.internal.RedlockBackend;
import io.lockstep.tck.servers.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;

/** N real redis-server processes for one test class, with faults and a way to heal them. */
final class RedisNodes implements AutoCloseable {

    private final List<RedisServer> servers = new ArrayList<>();
    private final List<String> extraArgs;
    private final boolean[] paused;

    private RedisNodes(int n, List<String> extraArgs) {
        this.extraArgs = extraArgs;
        this.paused = new boolean[n];
        try {
            for (int i = 0; i < n; i++) {
                servers.add(RedisServer.startWith(extraArgs));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    static RedisNodes start(int n) {
        return new RedisNodes(n, List.of());
    }

    static RedisNodes startPersistent(int n) {
        return new RedisNodes(n, List.of("--appendonly", "yes", "--appendfsync", "always"));
    }

    int size() {
        return servers.size();
    }

    RedisServer server(int i) {
        return servers.get(i);
    }

    int port(int i) {
        return servers.get(i).port();
    }

    /** {@code redlock://127.0.0.1:p1,127.0.0.1:p2,...} plus {@code query} if not empty. */
    String uri(String query) {
        String hosts = servers.stream().map(s -> s.host() + ":" + s.port()).collect(Collectors.joining(","));
        return "redlock://" + hosts + (query.isEmpty() ? "" : "?" + query);
    }

    List<HostAndPort> addresses() {
        return servers.stream().map(s -> new HostAndPort(s.host(), s.port())).toList();
    }

    /** A provider that owns its pools, with its backend exposed for assertions. */
    Client client(RedlockOptions options) {
        return client(options, addresses());
    }

    /** As {@link #client(RedlockOptions)}, reaching the nodes at {@code addresses} (e.g. through proxies). */
    Client client(RedlockOptions options, List<HostAndPort> addresses) {
        JedisClientConfig config = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(1000)
                .socketTimeoutMillis(2000)
                .build();
        List<RedlockBackend.NodeSpec> specs = new ArrayList<>();
        for (HostAndPort address : addresses) {
            JedisPoolConfig poolConfig = new JedisPoolConfig();
            poolConfig.setJmxEnabled(false);
            poolConfig.setMaxWait(java.time.Duration.ofSeconds(2));
            specs.add(
                    new RedlockBackend.NodeSpec(address.toString(), new JedisPool(poolConfig, address, config), true));
        }
        LockRuntime runtime = LockRuntime.defaults();
        RedlockBackend backend = new RedlockBackend(specs, options, runtime);
        return new Client(new RedlockLockProvider(backend, runtime), backend);
    }

    record Client(RedlockLockProvider provider, RedlockBackend backend) implements AutoCloseable {
        @Override
        public void close() {
            provider.close();
        }
    }

    /** A plain connection to node {@code i}, for looking at keys or playing another Redlock client. */
    Jedis jedis(int i) {
        return new Jedis(server(i).host(), server(i).port());
    }

    void pause(int i) {
        servers.get(i).pause();
        paused[i] = true;
    }

    void resume(int i) {
        servers.get(i).resume();
        paused[i] = false;
    }

    void kill(int i) {
        servers.get(i).kill();
    }

    void restart(int i) {
        servers.get(i).restart();
    }

    /** Resumes paused nodes, restarts dead ones and empties every node. */
    void heal() {
        for (int i = 0; i < servers.size(); i++) {
            RedisServer server = servers.get(i);
            if (paused[i]) {
                resume(i);
            }
            if (!server.isRunning()) {
                server.restart();
            }
            try (Jedis jedis = jedis(i)) {
                jedis.flushAll();
            }
        }
    }

    List<String> extraArgs() {
        return extraArgs;
    }

    @Override
    public void close() {
        for (int i = 0; i < servers.size(); i++) {
            try {
                if (paused[i]) {
                    servers.get(i).resume();
                }
                servers.get(i).close();
            } catch (RuntimeException ignored) {
                // best effort: the next server still gets closed
            }
        }
    }
}
