package io.lockstep.tck.servers;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLSocketFactory;
import org.jspecify.annotations.Nullable;

/**
 * The few RESP round trips the launchers need to see whether a replica, sentinel or cluster node is
 * ready (the kit has no Redis client). One command per connection; errors become {@link IOException}.
 */
final class Resp {

    /**
     * Ports of servers that speak only TLS, and how to reach them: a TLS launcher registers its port when
     * it picks it and removes it when it stops, so every readiness check keeps addressing nodes by port.
     */
    private static final Map<Integer, SSLSocketFactory> TLS = new ConcurrentHashMap<>();

    private Resp() {}

    /** From now on, {@link #call} speaks TLS to {@code port} through {@code factory}. */
    static void useTls(int port, SSLSocketFactory factory) {
        TLS.put(port, factory);
    }

    /** {@code port} is no longer a TLS server's (it stopped). */
    static void forgetTls(int port) {
        TLS.remove(port);
    }

    /**
     * Sends {@code args} to the server at 127.0.0.1:{@code port} and returns the reply: a String, a Long,
     * a List of replies, or null.
     */
    static @Nullable Object call(int port, String... args) throws IOException {
        try (Socket plain = new Socket()) {
            plain.connect(new InetSocketAddress("127.0.0.1", port), 500);
            plain.setSoTimeout(1000);
            SSLSocketFactory tls = TLS.get(port);
            Socket socket = tls == null ? plain : tls.createSocket(plain, "127.0.0.1", port, true);
            OutputStream out = socket.getOutputStream();
            StringBuilder request = new StringBuilder("*").append(args.length).append("\r\n");
            for (String arg : args) {
                byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
                request.append('$')
                        .append(bytes.length)
                        .append("\r\n")
                        .append(arg)
                        .append("\r\n");
            }
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            return read(new BufferedInputStream(socket.getInputStream()));
        }
    }

    /** {@link #call} for a reply that is text (a status or a bulk string); empty text if it failed. */
    static String text(int port, String... args) {
        try {
            Object reply = call(port, args);
            return reply == null ? "" : reply.toString();
        } catch (IOException e) {
            return "";
        }
    }

    /** The value of {@code field} in an INFO-style reply ({@code field:value} lines), or "". */
    static String infoField(String info, String field) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).strip();
            }
        }
        return "";
    }

    private static @Nullable Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new IOException(line);
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
                if (count < 0) {
                    return null;
                }
                List<@Nullable Object> items = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    items.add(read(in));
                }
                return items;
            }
            default:
                throw new IOException("unexpected RESP type " + type);
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\r'; b = in.read()) {
            if (b < 0) {
                throw new IOException("connection closed");
            }
            buffer.write(b);
        }
        in.read(); // '\n'
        return buffer.toString(StandardCharsets.UTF_8);
    }
}
