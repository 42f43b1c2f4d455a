package io.lockstep.examples.scenarios;

import io.lockstep.tck.servers.RedisServer;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs a scenario on the Redis at {@code args[0]}, or on a redis-server started on a free loopback port. */
final class Scenario {
    private Scenario() {}

    /** A scenario against a Redis URI; true if its invariant held. */
    @FunctionalInterface
    interface Body {
        boolean run(String redisUri, PrintStream out) throws Exception;
    }

    static void main(String[] args, Body body) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        boolean ok;
        if (args.length > 0) {
            ok = body.run(args[0], out);
        } else {
            try (RedisServer redis = RedisServer.start()) {
                out.println("(a redis-server on " + redis.uri() + ")");
                ok = body.run(redis.uri(), out);
            }
        }
        out.println(ok ? "OK: the invariant held" : "BROKEN: the invariant did not hold");
        System.exit(ok ? 0 : 1);
    }

    /** The scenario's pause: a holder that stops (a GC pause, a stalled VM), not a test waiting for time. */
    static void freeze(long millis) throws InterruptedException {
        Thread.sleep(millis);
    }
}
