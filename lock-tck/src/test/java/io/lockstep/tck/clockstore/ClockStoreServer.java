package io.lockstep.tck.clockstore;

import io.lockstep.tck.servers.LocalServer;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@link ClockStoreMain} in a child JVM on this JVM's class path: a {@link LocalServer} that libfaketime
 * reaches, so the kit's {@code SERVER_CLOCK} fault can restart it on a fast clock.
 */
public final class ClockStoreServer extends LocalServer {

    private ClockStoreServer() {
        super("clock-store", "nothing to install: the server runs from the test class path");
    }

    /** Starts a server on an ephemeral loopback port. */
    public static ClockStoreServer start() {
        ClockStoreServer server = new ClockStoreServer();
        server.startProcess();
        return server;
    }

    @Override
    protected Optional<String> locateExecutable() {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        return Files.isExecutable(java) ? Optional.of(java.toString()) : Optional.empty();
    }

    @Override
    protected List<String> command(String java, int port, Path workDir) {
        List<String> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            entries.add(
                    entry.isEmpty() ? entry : Path.of(entry).toAbsolutePath().toString());
        }
        return List.of(
                java,
                "-Xmx64m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                String.join(File.pathSeparator, entries),
                ClockStoreMain.class.getName(),
                Integer.toString(port),
                workDir.resolve("fence").toString());
    }

    @Override
    protected boolean answers(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host(), port), 500);
            socket.setSoTimeout(1000);
            PrintWriter out = new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8);
            out.println("PING");
            return "PONG"
                    .equals(new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8))
                            .readLine());
        } catch (IOException e) {
            return false;
        }
    }
}
