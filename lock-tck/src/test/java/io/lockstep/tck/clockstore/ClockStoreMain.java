package io.lockstep.tck.clockstore;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The clock store's server, run in a child JVM by {@link ClockStoreServer}: a lock table in memory behind
 * a line protocol, with a fence counter kept in a file so that fences keep increasing across a restart.
 * A JVM reads its clocks through libc, so libfaketime makes this server's clock run fast, which Debian's
 * redis-server does not allow.
 *
 * <p>Commands (one line each, names Base64url-encoded), answers one line:
 *
 * <ul>
 *   <li>{@code PING} → {@code PONG}
 *   <li>{@code ACQ name token leaseMs fencePerKey} → {@code OK fence} or {@code BUSY remainingMs}: the
 *       entry expires {@code leaseMs} after it is written, on this server's monotonic clock;
 *   <li>{@code WACQ name token expiresAtMs judgedAtMs fencePerKey}: the compare-and-swap form, with no
 *       expiry of its own: the entry is free when its {@code expiresAtMs}, written by its holder's wall
 *       clock, is below the acquirer's {@code judgedAtMs}, which its client computes;
 *   <li>{@code EXT name token leaseMs} and {@code WEXT name token expiresAtMs} → {@code 1} or {@code 0};
 *   <li>{@code REL name token} → {@code 1} or {@code 0}.
 * </ul>
 *
 * <p>{@code fencePerKey=1} is a bug some stores have: the fence lives in the entry and starts again at 1
 * when a new entry is written.
 */
public final class ClockStoreMain {

    private record Entry(String token, long fence, long expiresAtNanos, long expiresAtWallMs) {}

    private final Map<String, Entry> entries = new HashMap<>();
    private final Path fenceFile;
    private long fence;

    private ClockStoreMain(Path fenceFile) throws IOException {
        this.fenceFile = fenceFile;
        this.fence = Files.exists(fenceFile)
                ? Long.parseLong(Files.readString(fenceFile).strip())
                : 0;
    }

    /**
     * Serves on loopback.
     *
     * @param args the port and the file that keeps the fence counter
     */
    public static void main(String[] args) throws IOException {
        ClockStoreMain store = new ClockStoreMain(Path.of(args[1]));
        try (ServerSocket server = new ServerSocket(Integer.parseInt(args[0]), 50, InetAddress.getLoopbackAddress())) {
            while (true) {
                Socket socket = server.accept();
                Thread t = new Thread(() -> store.serve(socket), "clock-store-connection");
                t.setDaemon(true);
                t.start();
            }
        }
    }

    private void serve(Socket socket) {
        try (socket;
                BufferedReader in =
                        new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
                PrintWriter out = new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                out.println(answer(line.split(" ")));
            }
        } catch (IOException e) {
            // the client went away
        }
    }

    private synchronized String answer(String[] c) {
        long now = System.nanoTime();
        switch (c[0]) {
            case "PING":
                return "PONG";
            case "ACQ": {
                Entry cur = entries.get(c[1]);
                long lease = Long.parseLong(c[3]) * 1_000_000;
                if (cur != null && cur.expiresAtNanos - now > 0 && !cur.token.equals(c[2])) {
                    return "BUSY " + (cur.expiresAtNanos - now) / 1_000_000;
                }
                long f = cur != null && cur.token.equals(c[2]) ? cur.fence : nextFence(c[4]);
                entries.put(c[1], new Entry(c[2], f, now + lease, 0));
                return "OK " + f;
            }
            case "WACQ": {
                Entry cur = entries.get(c[1]);
                long judgedAt = Long.parseLong(c[4]);
                if (cur != null && cur.expiresAtWallMs >= judgedAt && !cur.token.equals(c[2])) {
                    return "BUSY " + (cur.expiresAtWallMs - judgedAt + 1);
                }
                long f = cur != null && cur.token.equals(c[2]) ? cur.fence : nextFence(c[5]);
                entries.put(c[1], new Entry(c[2], f, 0, Long.parseLong(c[3])));
                return "OK " + f;
            }
            case "EXT": {
                Entry cur = entries.get(c[1]);
                if (cur == null || !cur.token.equals(c[2]) || cur.expiresAtNanos - now <= 0) {
                    return "0";
                }
                entries.put(c[1], new Entry(c[2], cur.fence, now + Long.parseLong(c[3]) * 1_000_000, 0));
                return "1";
            }
            case "WEXT": {
                Entry cur = entries.get(c[1]);
                if (cur == null || !cur.token.equals(c[2])) {
                    return "0";
                }
                entries.put(c[1], new Entry(c[2], cur.fence, 0, Long.parseLong(c[3])));
                return "1";
            }
            case "REL": {
                Entry cur = entries.get(c[1]);
                if (cur == null || !cur.token.equals(c[2])) {
                    return "0";
                }
                entries.remove(c[1]);
                return "1";
            }
            default:
                return "ERR unknown command " + c[0];
        }
    }

    private long nextFence(String perKey) {
        if (perKey.equals("1")) {
            return 1;
        }
        fence++;
        try {
            Files.writeString(fenceFile, Long.toString(fence));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return fence;
    }
}
