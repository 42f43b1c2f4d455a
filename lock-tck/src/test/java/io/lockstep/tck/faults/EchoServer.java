package io.lockstep.tck.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** A tiny echo server on a loopback ephemeral port that counts the bytes it received. */
final class EchoServer implements AutoCloseable {

    private final ServerSocket server;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "echo-server");
        t.setDaemon(true);
        return t;
    });
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicLong received = new AtomicLong();

    EchoServer() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        threads.execute(this::acceptLoop);
    }

    int port() {
        return server.getLocalPort();
    }

    long received() {
        return received.get();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                sockets.add(socket);
                threads.execute(() -> echo(socket));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void echo(Socket socket) {
        try (socket;
                InputStream in = socket.getInputStream();
                OutputStream out = socket.getOutputStream()) {
            byte[] buffer = new byte[4096];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                received.addAndGet(n);
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // the client went away or was reset
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
        threads.shutdownNow();
        try {
            threads.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
