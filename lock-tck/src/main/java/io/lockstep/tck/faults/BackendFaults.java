package io.lockstep.tck.faults;

import io.lockstep.Lease;
import io.lockstep.LockProvider;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Assumptions;

/**
 * The faults a provider's kit can inject into its backend: the hook a provider author supplies so the
 * compatibility kit's fault scenarios run against real failures.
 *
 * <pre>{@code
 * class MyProviderCompatibilityTest extends LockProviderCompatibilityKit {
 *     static final RedisServer redis = RedisServer.start();
 *     static final TcpProxy proxy = TcpProxy.start(redis.host(), redis.port());
 *
 *     protected LockProvider newProvider() { return Locks.open("redis://127.0.0.1:" + proxy.port()); }
 *     protected BackendFaults faults() { return LocalServerFaults.of(redis, proxy); }
 * }
 * }</pre>
 *
 * <p>Each operation has a default that aborts the calling test by assumption (it is reported as
 * skipped, never as passed), so an implementation overrides only what it can do and lists it in
 * {@link #supported()}; the kit checks {@link #supported()} before it starts a scenario. {@link #NONE}
 * supports nothing.
 *
 * <p>Operations return once the fault is in effect (the server is stopped, the partition is up) and
 * are called from the test thread only.
 */
public interface BackendFaults {

    /** A fault a hook may be able to inject. */
    enum Fault {
        /** {@link #pauseServer()} and {@link #resumeServer()}: the server freezes, connections stay open. */
        PAUSE_SERVER,
        /** {@link #killServer()} and {@link #restartServer()}: the server dies and comes back on the same address. */
        KILL_SERVER,
        /** {@link #partition()} and {@link #heal()}: the client and the server stop hearing each other. */
        PARTITION,
        /** {@link #expireSession(LockProvider, Lease)}: the backend ends the session that holds one lease. */
        EXPIRE_SESSION,
        /**
         * {@link #addLatency(Duration)} and {@link #removeLatency()}: every request and every reply between
         * the kit's clients and the server arrives later; nothing is lost.
         */
        LATENCY,
        /**
         * {@link #loseReplies()} and {@link #restoreReplies()}: the server receives and applies every
         * request, and the replies on the clients' current connections are lost (the client sees a
         * timeout on a request that took effect, and reconnects).
         */
        LOST_REPLIES,
        /**
         * {@link #speedUpServerClock(double)} and {@link #restoreServerClock()}: the server runs on a clock
         * faster than real time (libfaketime), so whatever it counts (a TTL, an expiry timestamp, a session
         * timeout) ends early in real time.
         */
        SERVER_CLOCK
    }

    /** A hook that can inject nothing: every fault scenario is skipped. */
    BackendFaults NONE = new BackendFaults() {
        @Override
        public String toString() {
            return "BackendFaults.NONE";
        }
    };

    /** The faults this hook can inject; the kit skips scenarios that need any other. */
    default Set<Fault> supported() {
        return Set.of();
    }

    /** Whether {@link #supported()} contains {@code fault}. */
    default boolean supports(Fault fault) {
        return supported().contains(fault);
    }

    /**
     * Skips the calling test (by assumption) unless this hook supports {@code fault}.
     *
     * @throws org.opentest4j.TestAbortedException if it does not
     */
    default void assumeSupports(Fault fault) {
        Assumptions.assumeTrue(supports(fault), () -> this + " cannot inject " + fault);
    }

    /** Freezes the server (SIGSTOP): it keeps its connections and its state but answers nothing. */
    default void pauseServer() {
        abort(Fault.PAUSE_SERVER);
    }

    /** Lets a paused server run again (SIGCONT). */
    default void resumeServer() {
        abort(Fault.PAUSE_SERVER);
    }

    /** Kills the server at once (SIGKILL): connections break and whatever it kept only in memory is gone. */
    default void killServer() {
        abort(Fault.KILL_SERVER);
    }

    /** Starts a killed server again on the same address and returns once it answers. */
    default void restartServer() {
        abort(Fault.KILL_SERVER);
    }

    /** Cuts the network between the kit's clients and the server, silently: nothing is reset or refused. */
    default void partition() {
        abort(Fault.PARTITION);
    }

    /** Ends a {@link #partition()}. */
    default void heal() {
        abort(Fault.PARTITION);
    }

    /**
     * Makes the backend end the session of {@code provider}'s connection, as it would after not hearing
     * from it (a ZooKeeper session expiry, an etcd lease revoked); locks held through it are released
     * by the backend. Override this or {@link #expireSession(LockProvider, Lease)}.
     */
    default void expireSession(LockProvider provider) {
        abort(Fault.EXPIRE_SESSION);
    }

    /**
     * Makes the backend end the session that holds {@code lease}, acquired through {@code provider}. The
     * kit calls this one; by default it calls {@link #expireSession(LockProvider)}. The lease names what
     * to look up on the server when the provider object does not expose its session: its {@link
     * Lease#name() lock name} and {@link Lease#ownerToken() owner token} find the ZooKeeper lock node
     * (whose ephemeral owner is the session), the etcd key (whose lease to revoke), or the SQL advisory
     * lock (whose backend process to terminate).
     */
    default void expireSession(LockProvider provider, Lease lease) {
        expireSession(provider);
    }

    /**
     * Delays every request and every reply between the kit's clients and the server by {@code oneWay}
     * (a round trip takes {@code 2 × oneWay} longer), for requests sent from now on, until {@link
     * #removeLatency()}. Nothing is lost or reordered within a connection.
     */
    default void addLatency(Duration oneWay) {
        abort(Fault.LATENCY);
    }

    /** Ends {@link #addLatency(Duration)}. */
    default void removeLatency() {
        abort(Fault.LATENCY);
    }

    /**
     * Loses replies the way a network does: the server keeps receiving and applying requests, and the
     * replies on every connection the clients have open now are lost on their way back, so a client sees
     * a request time out although it took effect, gives that connection up and opens another. New
     * connections (and, for a backend without connections, each client's calls after its first lost
     * reply) work. Until {@link #restoreReplies()}.
     */
    default void loseReplies() {
        abort(Fault.LOST_REPLIES);
    }

    /**
     * Ends {@link #loseReplies()}: connections that are still losing replies are reset, so their
     * clients notice at once.
     */
    default void restoreReplies() {
        abort(Fault.LOST_REPLIES);
    }

    /**
     * Restarts the server on a clock that runs {@code rate} times as fast as real time (1.5: 50% fast),
     * and returns once it answers; clients reconnect as after {@link #restartServer()}. Until {@link
     * #restoreServerClock()}.
     */
    default void speedUpServerClock(double rate) {
        abort(Fault.SERVER_CLOCK);
    }

    /** Ends {@link #speedUpServerClock(double)}: the server is restarted on the real clock. */
    default void restoreServerClock() {
        abort(Fault.SERVER_CLOCK);
    }

    private void abort(Fault fault) {
        Assumptions.abort(this + " cannot inject " + fault);
    }
}
