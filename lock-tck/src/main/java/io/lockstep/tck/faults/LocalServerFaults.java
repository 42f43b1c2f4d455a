package io.lockstep.tck.faults;

import io.lockstep.LockProvider;
import io.lockstep.tck.servers.LocalServer;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link BackendFaults} for a server the kit started ({@link LocalServer}): pause with SIGSTOP, resume
 * with SIGCONT, kill with SIGKILL and restart on the same port; and, when the clients connect through a
 * {@link TcpProxy}, partition by stalling the proxy.
 *
 * <p>Sessions cannot be expired by a process signal: {@link Fault#EXPIRE_SESSION} is supported only
 * when the provider's module supplies how to expire one, with {@link #withSessionExpiry} (ZooKeeper:
 * close the session from a second client that joins it with the session's id and password).
 *
 * <p>Not thread-safe: one test drives it.
 */
public final class LocalServerFaults implements BackendFaults {

    private static final Logger log = LoggerFactory.getLogger(LocalServerFaults.class);

    private final LocalServer server;
    private final @Nullable TcpProxy proxy;
    private final @Nullable Consumer<LockProvider> sessionExpiry;

    private LocalServerFaults(
            LocalServer server, @Nullable TcpProxy proxy, @Nullable Consumer<LockProvider> sessionExpiry) {
        this.server = Objects.requireNonNull(server, "server");
        this.proxy = proxy;
        this.sessionExpiry = sessionExpiry;
    }

    /** Faults for {@code server}; the clients connect to it directly, so there are no partitions. */
    public static LocalServerFaults of(LocalServer server) {
        return new LocalServerFaults(server, null, null);
    }

    /**
     * The same faults plus {@link Fault#EXPIRE_SESSION}: {@code expiry} makes the server end the
     * session of the provider it is given and returns once the server has ended it.
     */
    public LocalServerFaults withSessionExpiry(Consumer<LockProvider> expiry) {
        return new LocalServerFaults(server, proxy, Objects.requireNonNull(expiry, "expiry"));
    }

    /** Faults for {@code server}, whose clients connect through {@code proxy}. */
    public static LocalServerFaults of(LocalServer server, TcpProxy proxy) {
        Objects.requireNonNull(proxy, "proxy");
        if (proxy.target().getPort() != server.port()) {
            throw new IllegalArgumentException("proxy forwards to port "
                    + proxy.target().getPort() + " but the server listens on port " + server.port());
        }
        return new LocalServerFaults(server, proxy, null);
    }

    @Override
    public Set<Fault> supported() {
        Set<Fault> faults = EnumSet.of(Fault.PAUSE_SERVER, Fault.KILL_SERVER);
        if (proxy != null) {
            faults.add(Fault.PARTITION);
        }
        if (sessionExpiry != null) {
            faults.add(Fault.EXPIRE_SESSION);
        }
        return faults;
    }

    @Override
    public void expireSession(LockProvider provider) {
        if (sessionExpiry == null) {
            BackendFaults.super.expireSession(provider);
            return;
        }
        log.info("Expiring the session of {} on {}", provider, describe());
        sessionExpiry.accept(provider);
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
    public String toString() {
        return "LocalServerFaults[" + describe() + (proxy == null ? "" : ", via " + proxy) + "]";
    }

    private String describe() {
        return server.getClass().getSimpleName() + " on port " + server.port();
    }
}
