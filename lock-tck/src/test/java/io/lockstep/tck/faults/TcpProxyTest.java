package io.lockstep.tck.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.tck.faults.TcpProxy.Direction;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class TcpProxyTest {

    /** How long a read waits before the test concludes nothing is coming. */
    private static final int QUIET_MILLIS = 300;

    private EchoServer echo;
    private TcpProxy proxy;

    @BeforeEach
    void start() throws IOException {
        echo = new EchoServer();
        proxy = TcpProxy.start("127.0.0.1", echo.port());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        echo.close();
    }

    @Test
    void forwardsBytesBothWays() throws IOException {
        try (Socket socket = connect()) {
            assertThat(roundTrip(socket, "hello")).isEqualTo("hello");
            assertThat(roundTrip(socket, "again")).isEqualTo("again");
        }
        assertThat(proxy.acceptedConnections()).isEqualTo(1);
    }

    @Test
    void delayAddsLatencyInTheGivenDirectionOnly() throws IOException {
        try (Socket socket = connect()) {
            roundTrip(socket, "warm");
            proxy.delay(Direction.CLIENT_TO_SERVER, Duration.ofMillis(200));
            long start = System.nanoTime();
            assertThat(roundTrip(socket, "slow")).isEqualTo("slow");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));

            // 1 s: long enough that a round trip on a loaded machine never takes it, so the healed
            // round trip below tells "delay removed" from "delay kept".
            proxy.heal().delay(Direction.SERVER_TO_CLIENT, Duration.ofSeconds(1));
            start = System.nanoTime();
            assertThat(roundTrip(socket, "back")).isEqualTo("back");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(1));

            proxy.heal();
            start = System.nanoTime();
            assertThat(roundTrip(socket, "fast")).isEqualTo("fast");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
        }
    }

    @Test
    void stallHoldsBytesWithoutClosingAndHealDeliversThem() throws IOException {
        try (Socket socket = connect()) {
            roundTrip(socket, "warm");
            proxy.stall();
            send(socket, "held");
            assertThatThrownBy(() -> read(socket, 4)).isInstanceOf(SocketTimeoutException.class);
            assertThat(echo.received()).isEqualTo(4); // only "warm" reached the server

            proxy.heal();
            assertThat(read(socket, 4)).isEqualTo("held");
            assertThat(roundTrip(socket, "more")).isEqualTo("more");
        }
    }

    @Test
    void newConnectionsDuringAStallConnectButGetNoAnswer() throws IOException {
        proxy.stall();
        try (Socket socket = connect()) {
            send(socket, "ping");
            assertThatThrownBy(() -> read(socket, 4)).isInstanceOf(SocketTimeoutException.class);
            proxy.heal();
            assertThat(read(socket, 4)).isEqualTo("ping");
        }
    }

    @Test
    void dropDiscardsBytesSilently() throws IOException {
        try (Socket socket = connect()) {
            roundTrip(socket, "warm");
            proxy.drop();
            send(socket, "lost");
            assertThatThrownBy(() -> read(socket, 4)).isInstanceOf(SocketTimeoutException.class);

            proxy.heal();
            assertThat(roundTrip(socket, "kept")).isEqualTo("kept");
            assertThat(echo.received()).isEqualTo(8); // "warm" and "kept", never "lost"
        }
    }

    @Test
    void dropInOneDirectionLetsTheServerReceive() throws IOException {
        try (Socket socket = connect()) {
            proxy.drop(Direction.SERVER_TO_CLIENT);
            send(socket, "seen");
            assertThatThrownBy(() -> read(socket, 4)).isInstanceOf(SocketTimeoutException.class);
            assertThat(echo.received()).isEqualTo(4);
            proxy.heal();
            assertThat(roundTrip(socket, "back")).isEqualTo("back");
        }
    }

    @Test
    void resetSendsRstToOpenConnectionsAndLetsNewOnesThrough() throws IOException {
        try (Socket socket = connect()) {
            roundTrip(socket, "warm");
            proxy.reset();
            assertThatThrownBy(() -> {
                        // A reset connection fails on read or write with "Connection reset", not a clean EOF.
                        send(socket, "after");
                        read(socket, 5);
                    })
                    .isInstanceOf(SocketException.class)
                    .hasMessageContaining("reset");
        }
        try (Socket socket = connect()) {
            assertThat(roundTrip(socket, "fresh")).isEqualTo("fresh");
        }
    }

    @Test
    void cutClientToServerHoldsRequestsUntilHealed() throws IOException {
        try (Socket socket = connect()) {
            roundTrip(socket, "warm");
            proxy.cut(Direction.CLIENT_TO_SERVER);
            send(socket, "req1");
            assertThatThrownBy(() -> read(socket, 4)).isInstanceOf(SocketTimeoutException.class);
            assertThat(echo.received()).isEqualTo(4);
            proxy.heal();
            assertThat(read(socket, 4)).isEqualTo("req1");
        }
    }

    @Test
    void cutServerToClientLetsRequestsThroughButHoldsReplies() throws IOException {
        try (Socket socket = connect()) {
            roundTrip(socket, "warm");
            proxy.cut(Direction.SERVER_TO_CLIENT);
            send(socket, "req2");
            assertThatThrownBy(() -> read(socket, 4)).isInstanceOf(SocketTimeoutException.class);
            assertThat(echo.received()).isEqualTo(8); // the server got it and answered
            proxy.heal();
            assertThat(read(socket, 4)).isEqualTo("req2");
        }
    }

    @Test
    void forwardsMegabytesWithBackPressureWhileDelayed() throws Exception {
        byte[] payload = new byte[4 << 20];
        new java.util.Random(42).nextBytes(payload);
        proxy.delay(Direction.SERVER_TO_CLIENT, Duration.ofMillis(5));
        try (Socket socket = connect()) {
            socket.setSoTimeout(10_000);
            java.util.concurrent.CompletableFuture<byte[]> echoed =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                        try {
                            return socket.getInputStream().readNBytes(payload.length);
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    });
            socket.getOutputStream().write(payload);
            socket.getOutputStream().flush();
            assertThat(echoed.get(20, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(payload);
        }
    }

    @Test
    void closeStopsTheThreadAndTheListener() throws IOException {
        Socket socket = connect();
        roundTrip(socket, "warm");
        int port = proxy.port();
        long threadsBefore = proxyThreads();
        assertThat(threadsBefore).isPositive();

        proxy.close();

        assertThatThrownBy(() -> {
                    // Open connections are reset on close: the client fails at once instead of hanging.
                    if (socket.getInputStream().read() == -1) {
                        throw new SocketException("closed");
                    }
                })
                .isInstanceOf(SocketException.class)
                .isNotInstanceOf(SocketTimeoutException.class);
        socket.close();
        assertThatThrownBy(() -> new Socket("127.0.0.1", port).close()).isInstanceOf(ConnectException.class);
        assertThat(proxyThreads()).isEqualTo(threadsBefore - 1);
        assertThatThrownBy(proxy::stall).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aServerThatRefusesMakesTheClientSeeAClosedConnection() throws Exception {
        int port = echo.port();
        echo.close();
        try (TcpProxy orphan = TcpProxy.start("127.0.0.1", port);
                Socket socket = new Socket()) {
            assertThatThrownBy(() -> {
                        // The reset may even arrive before connect() returns.
                        socket.connect(new InetSocketAddress(orphan.host(), orphan.port()), 2000);
                        socket.setSoTimeout(5000);
                        if (socket.getInputStream().read() == -1) {
                            throw new SocketException("closed (reset expected, EOF is acceptable)");
                        }
                    })
                    .isInstanceOf(SocketException.class)
                    .isNotInstanceOf(SocketTimeoutException.class);
        }
    }

    private static long proxyThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("lockstep-tcp-proxy-") && t.isAlive())
                .count();
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(proxy.host(), proxy.port()), 2000);
        socket.setSoTimeout(QUIET_MILLIS);
        return socket;
    }

    private static String roundTrip(Socket socket, String text) throws IOException {
        send(socket, text);
        int saved = socket.getSoTimeout();
        socket.setSoTimeout(5000);
        try {
            return read(socket, text.length());
        } finally {
            socket.setSoTimeout(saved);
        }
    }

    private static void send(Socket socket, String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
    }

    private static String read(Socket socket, int length) throws IOException {
        InputStream in = socket.getInputStream();
        byte[] bytes = new byte[length];
        int off = 0;
        while (off < length) {
            int n = in.read(bytes, off, length - off);
            if (n < 0) {
                throw new SocketException("closed after " + off + " bytes");
            }
            off += n;
        }
        return new String(bytes, StandardCharsets.US_ASCII);
    }
}
