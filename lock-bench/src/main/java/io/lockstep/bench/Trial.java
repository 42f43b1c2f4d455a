package io.lockstep.bench;

import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.infra.BenchmarkParams;
import redis.clients.jedis.HostAndPort;

/**
 * One JMH trial of a contender: its own redis-server processes (behind delaying proxies if asked),
 * the contender's clients, and the operations it ran, counted so that {@link #finish} can prove from
 * the servers' command counters that the trial did what its name says.
 */
final class Trial {

    private final String backend;
    private final List<RedisServer> servers = new ArrayList<>();
    private final List<TcpProxy> proxies = new ArrayList<>();
    private final LongAdder operations = new LongAdder();
    private final Contender contender;
    private final CommandMix mix;

    private Trial(String backend, @Nullable Duration oneWayDelay) {
        this.backend = backend;
        Contender opened = null;
        try {
            List<HostAndPort> direct = new ArrayList<>();
            List<HostAndPort> clients = new ArrayList<>();
            for (int i = 0; i < Contenders.nodes(backend); i++) {
                RedisServer server = RedisServer.start();
                servers.add(server);
                direct.add(new HostAndPort(server.host(), server.port()));
                if (oneWayDelay == null) {
                    clients.add(direct.get(i));
                } else {
                    TcpProxy proxy = TcpProxy.start(server.host(), server.port());
                    proxies.add(proxy);
                    proxy.delay(TcpProxy.Direction.CLIENT_TO_SERVER, oneWayDelay);
                    proxy.delay(TcpProxy.Direction.SERVER_TO_CLIENT, oneWayDelay);
                    clients.add(new HostAndPort(proxy.host(), proxy.port()));
                }
            }
            opened = Contenders.open(backend, clients);
            this.contender = opened;
            prime(opened);
            this.mix = CommandMix.start(direct);
        } catch (RuntimeException e) {
            if (opened != null) {
                opened.close();
            }
            stopServers();
            throw e;
        }
    }

    /**
     * One operation on a lock no measured caller uses, before the counters start: the clients open
     * their first connections here. lock-redlock's first fan-out on a cold pool goes through worker
     * threads and can leave its key behind on a node for the whole lease (the late-grant bug of issue
     * 14, item 14); on a name of its own that cannot turn the measured locks into 2-of-3 quorums.
     */
    private static void prime(Contender contender) {
        contender.acquireRelease(new Caller("bench/prime"));
        try {
            Thread.sleep(200); // late replies of the priming operation land before the counters start
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while priming the clients", e);
        }
    }

    /** Starts the servers of {@code backend} and its clients; {@code oneWayDelay} puts a proxy delaying each direction in front of every server. */
    static Trial start(String backend, @Nullable Duration oneWayDelay) {
        return new Trial(backend, oneWayDelay);
    }

    /** One measured operation. */
    void run(Caller caller) {
        contender.acquireRelease(caller);
        operations.increment();
    }

    /**
     * Checks what the servers saw per operation against what {@code backend} must do, prints it,
     * records it for the report, and stops everything.
     *
     * @throws IllegalStateException if the servers saw anything else: the trial measured something other than its name
     */
    void finish(BenchmarkParams params) {
        Map<String, String> paramMap = new LinkedHashMap<>();
        for (String key : params.getParamsKeys()) {
            paramMap.put(key, params.getParam(key));
        }
        finish(params.getBenchmark(), paramMap, params.getThreads());
    }

    /** {@link #finish(BenchmarkParams)} outside JMH. */
    String finish(String benchmark, Map<String, String> params, int threads) {
        return finish(benchmark, params, threads, Contenders.expectation(backend));
    }

    /** {@link #finish(String, Map, int)}, checked against {@code expected} (a test checks a trial against another's). */
    String finish(String benchmark, Map<String, String> params, int threads, Contenders.Expectation expected) {
        try {
            long ops = operations.sum();
            List<Map<String, Double>> perServer = mix.perOperation(ops);
            String name = benchmark + " " + backend;
            List<String> missing = mix.missingScripts(expected.scripts());
            if (!missing.isEmpty()) {
                throw new IllegalStateException(name + " did not run the scripts its floor runs ("
                        + String.join(", ", missing) + "): the provider's scripts changed; copy them into RawFloors");
            }
            String line = CommandMix.check(name, expected.perNode(), perServer);
            System.out.println();
            System.out.println("Commands per operation, " + backend + " (" + ops + " operations): " + line);
            CommandMix.record(
                    new CommandMix.MixRecord(benchmark, params, threads, ops, mix.redisVersion(), perServer, line));
            return line;
        } finally {
            try {
                contender.close();
            } finally {
                stopServers();
            }
        }
    }

    private void stopServers() {
        proxies.forEach(TcpProxy::close);
        servers.forEach(RedisServer::close);
    }
}
