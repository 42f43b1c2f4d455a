package io.lockstep.tck.resp;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.ClockAssumption;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.Grant;
import io.lockstep.spi.LockBackend;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A test fixture: a lock backend over a real redis-server spoken to in raw RESP, one connection, no
 * client library. It lets lock-tck run its own fault scenarios (proxy partitions, server signals,
 * child JVMs) against a real server without depending on a backend client.
 */
final class RespLockBackend implements LockBackend<RespLockBackend.Handle> {

    record Handle(String name, String token, long fence) {}

    static final ProviderInfo INFO = new ProviderInfo(
            "resp-fixture",
            StrengthTier.BEST_EFFORT,
            EnumSet.of(Capability.FENCING, Capability.LEASE_EXPIRY, Capability.EXTEND));

    private static final String ACQUIRE = "local cur = redis.call('GET', KEYS[1]) "
            + "if cur then "
            + "  local sp = string.find(cur, ' ', 1, true) "
            + "  if string.sub(cur, 1, sp - 1) == ARGV[1] then "
            + "    redis.call('PEXPIRE', KEYS[1], ARGV[2]) return {1, tonumber(string.sub(cur, sp + 1))} end "
            + "  return {0, redis.call('PTTL', KEYS[1])} "
            + "end "
            + "local f = redis.call('INCR', KEYS[2]) "
            + "redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. f, 'PX', ARGV[2]) "
            + "return {1, f}";
    private static final String EXTEND = "local cur = redis.call('GET', KEYS[1]) "
            + "if cur and string.sub(cur, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. ' ' then "
            + "  return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";
    private static final String RELEASE = "local cur = redis.call('GET', KEYS[1]) "
            + "if cur and string.sub(cur, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. ' ' then "
            + "  return redis.call('DEL', KEYS[1]) end return 0";

    /** How soon a waiter asks again, having no release notice to wait for. */
    private static final long POLL_MILLIS = 20;

    private final String host;
    private final int port;
    private final int timeoutMillis;
    private Socket socket;
    private InputStream in;
    private OutputStream out;
    private boolean closed;
    private final double driftFactor;
    private final boolean ignoresDrift;

    RespLockBackend(String host, int port, Duration timeout, double driftFactor, boolean ignoresDrift) {
        this.host = host;
        this.port = port;
        this.timeoutMillis = (int) timeout.toMillis();
        this.driftFactor = driftFactor;
        this.ignoresDrift = ignoresDrift;
    }

    @Override
    public ProviderInfo info() {
        return INFO.withClock(ClockAssumption.rateDrift(driftFactor));
    }

    /** The key's TTL runs on the server's clock: the grant leaves the drift allowance, unless broken so. */
    private Duration validity(Duration leaseTime) {
        return ignoresDrift || driftFactor == 0 ? leaseTime : ClockDrift.validity(leaseTime, driftFactor);
    }

    @Override
    public Attempt<Handle> tryLock(String name, String ownerToken, Duration leaseTime) {
        List<?> reply = (List<?>) eval(ACQUIRE, name, ownerToken, leaseTime);
        long status = (Long) reply.get(0);
        long value = (Long) reply.get(1);
        if (status == 1) {
            return Attempt.granted(
                    Grant.of(new Handle(name, ownerToken, value), OptionalLong.of(value), validity(leaseTime)));
        }
        // No release notice in this fixture: ask again soon rather than at the holder's expiry, so
        // waiting scenarios (the contention fuzz) do not spend their time in the provider's polling bound.
        return Attempt.busy(Duration.ofMillis(Math.max(1, Math.min(value, POLL_MILLIS))));
    }

    @Override
    public Optional<Duration> extend(Handle handle, Duration leaseTime) {
        return (Long) eval(EXTEND, handle.name(), handle.token(), leaseTime) == 1
                ? Optional.of(validity(leaseTime))
                : Optional.empty();
    }

    @Override
    public boolean release(Handle handle) {
        return (Long) eval(RELEASE, handle.name(), handle.token(), Duration.ofMillis(1)) == 1;
    }

    @Override
    public void abandon(String name, String ownerToken) {
        try {
            eval(RELEASE, name, ownerToken, Duration.ofMillis(1));
        } catch (RuntimeException e) {
            // best effort: the lock, if granted, ends by its lease time
        }
    }

    @Override
    public String describe() {
        return "redis-server at " + host + ":" + port;
    }

    @Override
    public synchronized void close() {
        closed = true;
        disconnect();
    }

    private Object eval(String script, String name, String token, Duration leaseTime) {
        String key = "tck:{" + name + "}";
        return call("EVAL", script, "2", key, key + ":fence", token, Long.toString(leaseTime.toMillis()));
    }

    private synchronized Object call(String... args) {
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
                in = new BufferedInputStream(s.getInputStream());
                out = s.getOutputStream();
            }
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
            for (String arg : args) {
                byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
                request.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
                request.writeBytes(bytes);
                request.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
            }
            out.write(request.toByteArray());
            out.flush();
            return read();
        } catch (IOException e) {
            disconnect(); // a timed-out connection may still deliver a late reply: never reuse it
            throw new BackendUnavailableException(describe() + " unreachable: " + e, e, true);
        }
    }

    private Object read() throws IOException {
        int type = in.read();
        String line = readLine();
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new BackendUnavailableException(describe() + " replied " + line, null, false);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] bytes = in.readNBytes(length + 2);
                return new String(bytes, 0, length, StandardCharsets.UTF_8);
            }
            case '*': {
                int count = Integer.parseInt(line);
                List<Object> items = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    items.add(read());
                }
                return items;
            }
            default:
                throw new IOException("unexpected RESP type " + type);
        }
    }

    private String readLine() throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            line.append((char) c);
        }
        in.read(); // '\n'
        return line.toString();
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
