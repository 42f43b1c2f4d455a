package io.lockstep.tck.faults;

import io.lockstep.tck.servers.LocalServer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link BackendFaults} for a server the kit started ({@link LocalServer}): pause with SIGSTOP, resume
 * with SIGCONT, kill with SIGKILL and restart on the same port; and, when the clients connect through a
 * {@link TcpProxy}, partition by stalling the proxy, add latency by delaying both directions, and lose
 * the replies of the connections open at that moment.
 *
 * <p>Sessions cannot be expired by a process signal, so {@link Fault#EXPIRE_SESSION} is not supported
 * here. A backend with sessions extends this class: it overrides {@link #supported()} to add {@link
 * Fault#EXPIRE_SESSION} and {@link #expireSession(io.lockstep.LockProvider, io.lockstep.Lease)}, which
 * finds the holder's session on the server from the lease's name (for example the ZooKeeper lock node's
 * ephemeral owner, or the database process holding the advisory lock), and reaches the server through
 * {@link #server()}.
 *
 * <pre>{@code
 * final class ZooKeeperFaults extends LocalServerFaults {
 *     ZooKeeperFaults(LocalServer zk, TcpProxy proxy) { super(zk, proxy); }
 *     public Set<Fault> supported() {
 *         Set<Fault> all = EnumSet.copyOf(super.supported());
 *         all.add(Fault.EXPIRE_SESSION);
 *         return all;
 *     }
 *     public void expireSession(LockProvider provider, Lease lease) { ... }
 * }
 * }</pre>
 *
 * <p>Not thread-safe: one test drives it.
 */
public class LocalServerFaults implements BackendFaults {

    private static final Logger log = LoggerFactory.getLogger(LocalServerFaults.class);

    private final LocalServer server;
    private final @Nullable TcpProxy proxy;

    /**
     * Faults for {@code server}, whose clients connect through {@code proxy} if it is not null.
     *
     * @throws IllegalArgumentException if the proxy forwards to another port than the server's
     */
    protected LocalServerFaults(LocalServer server, @Nullable TcpProxy proxy) {
        this.server = Objects.requireNonNull(server, "server");
        if (proxy != null && proxy.target().getPort() != server.port()) {
            throw new IllegalArgumentException("proxy forwards to port "
                    + proxy.target().getPort() + " but the server listens on port " + server.port());
        }
        this.proxy = proxy;
    }

    /** Faults for {@code server}; the clients connect to it directly, so there are no partitions. */
    public static LocalServerFaults of(LocalServer server) {
        return new LocalServerFaults(server, null);
    }

    /** Faults for {@code server}, whose clients connect through {@code proxy}. */
    public static LocalServerFaults of(LocalServer server, TcpProxy proxy) {
        Objects.requireNonNull(proxy, "proxy");
        return new LocalServerFaults(server, proxy);
    }

    /** The server the faults are injected into. */
    protected final LocalServer server() {
        return server;
    }

    /** The proxy the clients connect through, if any. */
    protected final @Nullable TcpProxy proxy() {
        return proxy;
    }

    /**
     * Pause and kill; with a proxy also partition, latency and lost replies; a fast server clock where
     * libfaketime reaches the server ({@link LocalServer#canFakeClock()}). A subclass adds what it can do
     * beyond these.
     */
    @Override
    public Set<Fault> supported() {
        Set<Fault> faults = proxy == null
                ? EnumSet.of(Fault.PAUSE_SERVER, Fault.KILL_SERVER)
                : EnumSet.of(Fault.PAUSE_SERVER, Fault.KILL_SERVER, Fault.PARTITION, Fault.LATENCY, Fault.LOST_REPLIES);
        if (server.canFakeClock() && FakeClock.library().isPresent()) {
            faults.add(Fault.SERVER_CLOCK);
        }
        return faults;
    }

    @Override
    public void speedUpServerClock(double rate) {
        FakeClock clock = FakeClock.rate(rate);
        log.info("Restarting {} on a {}", describe(), clock);
        server.useClock(clock);
        server.restart();
    }

    @Override
    public void restoreServerClock() {
        log.info("Restarting {} on the real clock", describe());
        server.useClock(null);
        server.restart();
    }

    @Override
    public void pauseServer() {
        log.info("Pausing {} (SIGSTOP)", describe());
        server.pause();
    }

    @Override
    public void resumeServer() {
        log.info("Resuming {} (SIGCONT)", describe());
        server.resume();
    }

    @Override
    public void killServer() {
        log.info("Killing {} (SIGKILL)", describe());
        server.kill();
    }

    @Override
    public void restartServer() {
        log.info("Restarting {}", describe());
        server.restart();
    }

    @Override
    public void partition() {
        if (proxy == null) {
            BackendFaults.super.partition();
            return;
        }
        log.info("Partitioning the clients from {}", describe());
        proxy.stall();
    }

    @Override
    public void heal() {
        if (proxy == null) {
            BackendFaults.super.heal();
            return;
        }
        log.info("Healing the partition to {}", describe());
        proxy.heal();
    }

    @Override
    public void addLatency(Duration oneWay) {
        if (proxy == null) {
            BackendFaults.super.addLatency(oneWay);
            return;
        }
        log.info("Delaying every message to and from {} by {}", describe(), oneWay);
        proxy.delay(TcpProxy.Direction.CLIENT_TO_SERVER, oneWay);
        proxy.delay(TcpProxy.Direction.SERVER_TO_CLIENT, oneWay);
    }

    @Override
    public void removeLatency() {
        if (proxy == null) {
            BackendFaults.super.removeLatency();
            return;
        }
        log.info("Removing the latency to {}", describe());
        proxy.delay(TcpProxy.Direction.CLIENT_TO_SERVER, Duration.ZERO);
        proxy.delay(TcpProxy.Direction.SERVER_TO_CLIENT, Duration.ZERO);
    }

    @Override
    public void loseReplies() {
        if (proxy == null) {
            BackendFaults.super.loseReplies();
            return;
        }
        log.info("Losing the replies of every connection open to {}", describe());
        proxy.loseReplies();
    }

    @Override
    public void restoreReplies() {
        if (proxy == null) {
            BackendFaults.super.restoreReplies();
            return;
        }
        log.info("Resetting the connections to {} that lost their replies", describe());
        proxy.resetConnectionsLosingReplies();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + describe() + (proxy == null ? "" : ", via " + proxy) + "]";
    }

    private String describe() {
        return server.getClass().getSimpleName() + " on port " + server.port();
    }
}
