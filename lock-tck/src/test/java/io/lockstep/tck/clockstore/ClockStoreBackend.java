package io.lockstep.tck.clockstore;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.ClockAssumption;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.Grant;
import io.lockstep.spi.LockBackend;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.EnumSet;
import java.util.Optional;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * A test fixture: a lock backend over {@link ClockStoreMain}, one connection. In its first form the
 * server's clock ends a lock (a TTL, as Redis's); in its second ({@code wallClockOffset} set) the store is
 * compare-and-swap with no expiry of its own, and expiry compares the holder's wall-clock timestamp with
 * the acquirer's wall clock, less the offset it declares. Each {@link Bug} is one realistic mistake that
 * only the clock group can see.
 */
final class ClockStoreBackend implements LockBackend<ClockStoreBackend.Handle> {

    record Handle(String name, String token, long fence) {}

    /** One mistake each; {@link #NONE} is the correct fixture. */
    enum Bug {
        NONE,
        /** Declares the drift factor but grants the whole lease time. */
        IGNORES_DRIFT,
        /** The fence lives in the lock's entry and starts again at 1 when a new entry is written. */
        FENCE_PER_KEY,
        /** Compares wall clocks but declares no offset (the acquirer judges by its own clock). */
        OFFSET_UNDECLARED,
        /** Declares the wall-clock offset but judges expiry without allowing it. */
        OFFSET_NOT_ALLOWED
    }

    private static final ProviderInfo INFO = new ProviderInfo(
            "clock-store-fixture",
            StrengthTier.BEST_EFFORT,
            EnumSet.of(Capability.FENCING, Capability.LEASE_EXPIRY, Capability.EXTEND));

    /** How soon a waiter asks again, having no release notice to wait for. */
    private static final long POLL_MILLIS = 20;

    private final String host;
    private final int port;
    private final int timeoutMillis;
    private final double driftFactor;
    private final @Nullable Duration wallClockOffset;
    private final Bug bug;
    private @Nullable Socket socket;
    private @Nullable BufferedReader in;
    private @Nullable PrintWriter out;
    private boolean closed;

    ClockStoreBackend(
            String host, int port, Duration timeout, double driftFactor, @Nullable Duration wallClockOffset, Bug bug) {
        this.host = host;
        this.port = port;
        this.timeoutMillis = (int) timeout.toMillis();
        this.driftFactor = driftFactor;
        this.wallClockOffset = wallClockOffset;
        this.bug = bug;
    }

    @Override
    public ProviderInfo info() {
        ClockAssumption clock = ClockAssumption.rateDrift(driftFactor);
        if (wallClockOffset != null && bug != Bug.OFFSET_UNDECLARED) {
            clock = clock.withWallClockOffset(wallClockOffset);
        }
        return INFO.withClock(clock);
    }

    private Duration validity(Duration leaseTime) {
        return bug == Bug.IGNORES_DRIFT || driftFactor == 0 ? leaseTime : ClockDrift.validity(leaseTime, driftFactor);
    }

    private String perKey() {
        return bug == Bug.FENCE_PER_KEY ? "1" : "0";
    }

    @Override
    public Attempt<Handle> tryLock(String name, String ownerToken, Duration leaseTime) {
        String reply;
        if (wallClockOffset == null) {
            reply = call("ACQ", key(name), ownerToken, Long.toString(leaseTime.toMillis()), perKey());
        } else {
            long now = System.currentTimeMillis();
            // An entry is over once its holder's timestamp is behind this clock by more than the offset two
            // clients' wall clocks may differ by.
            long allowance = bug == Bug.NONE || bug == Bug.IGNORES_DRIFT || bug == Bug.FENCE_PER_KEY
                    ? wallClockOffset.toMillis()
                    : 0;
            reply = call(
                    "WACQ",
                    key(name),
                    ownerToken,
                    Long.toString(now + leaseTime.toMillis()),
                    Long.toString(now - allowance),
                    perKey());
        }
        String[] parts = reply.split(" ");
        long value = Long.parseLong(parts[1]);
        if (parts[0].equals("OK")) {
            return Attempt.granted(
                    Grant.of(new Handle(name, ownerToken, value), OptionalLong.of(value), validity(leaseTime)));
        }
        return Attempt.busy(Duration.ofMillis(Math.max(1, Math.min(value, POLL_MILLIS))));
    }

    @Override
    public Optional<Duration> extend(Handle handle, Duration leaseTime) {
        String reply = wallClockOffset == null
                ? call("EXT", key(handle.name()), handle.token(), Long.toString(leaseTime.toMillis()))
                : call(
                        "WEXT",
                        key(handle.name()),
                        handle.token(),
                        Long.toString(System.currentTimeMillis() + leaseTime.toMillis()));
        return reply.equals("1") ? Optional.of(validity(leaseTime)) : Optional.empty();
    }

    @Override
    public boolean release(Handle handle) {
        return call("REL", key(handle.name()), handle.token()).equals("1");
    }

    @Override
    public void abandon(String name, String ownerToken) {
        try {
            call("REL", key(name), ownerToken);
        } catch (RuntimeException e) {
            // best effort: the lock, if granted, ends by its lease time
        }
    }

    @Override
    public String describe() {
        return "clock store at " + host + ":" + port;
    }

    @Override
    public synchronized void close() {
        closed = true;
        disconnect();
    }

    private static String key(String name) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(name.getBytes(StandardCharsets.UTF_8));
    }

    private synchronized String call(String... args) {
        if (closed) {
            throw new BackendUnavailableException(describe() + ": client closed", null, false);
        }
        try {
            if (socket == null) {
                Socket s = new Socket();
                s.connect(new InetSocketAddress(host, port), timeoutMillis);
                s.setSoTimeout(timeoutMillis);
                s.setTcpNoDelay(true);
                socket = s;
                in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
                out = new PrintWriter(s.getOutputStream(), true, StandardCharsets.UTF_8);
            }
            out.println(String.join(" ", args));
            String line = in.readLine();
            if (line == null) {
                throw new IOException("connection closed");
            }
            if (line.startsWith("ERR")) {
                throw new BackendUnavailableException(describe() + " replied " + line, null, false);
            }
            return line;
        } catch (IOException e) {
            disconnect(); // a timed-out connection may still deliver a late reply: never reuse it
            throw new BackendUnavailableException(describe() + " unreachable: " + e, e, true);
        }
    }

    private void disconnect() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException e) {
                // nothing more to do
            }
        }
        socket = null;
        in = null;
        out = null;
    }
}
