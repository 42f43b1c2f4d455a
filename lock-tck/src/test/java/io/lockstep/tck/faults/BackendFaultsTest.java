package io.lockstep.tck.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.tck.faults.BackendFaults.Fault;
import io.lockstep.tck.servers.RedisServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.opentest4j.TestAbortedException;

@Timeout(60)
class BackendFaultsTest {

    private static RedisServer redis;
    private static TcpProxy proxy;

    @BeforeAll
    static void startServer() {
        redis = RedisServer.start();
        proxy = TcpProxy.start(redis.host(), redis.port());
    }

    @AfterAll
    static void stopServer() {
        proxy.close();
        redis.close();
    }

    @Test
    void noneSupportsNothingAndSkipsEveryFaultByAssumption() {
        BackendFaults none = BackendFaults.NONE;
        assertThat(none.supported()).isEmpty();
        assertThatThrownBy(none::pauseServer)
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("PAUSE_SERVER");
        assertThatThrownBy(none::killServer).isInstanceOf(TestAbortedException.class);
        assertThatThrownBy(none::partition).isInstanceOf(TestAbortedException.class);
        assertThatThrownBy(() -> none.expireSession(null)).isInstanceOf(TestAbortedException.class);
        assertThatThrownBy(() -> none.assumeSupports(Fault.KILL_SERVER))
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("KILL_SERVER");
    }

    @Test
    void aHookWithoutAProxyCannotPartition() {
        LocalServerFaults faults = LocalServerFaults.of(redis);
        assertThat(faults.supported()).containsExactlyInAnyOrder(Fault.PAUSE_SERVER, Fault.KILL_SERVER);
        assertThatThrownBy(faults::partition).isInstanceOf(TestAbortedException.class);
    }

    @Test
    void aProxyForAnotherServerIsRejected() {
        try (TcpProxy elsewhere = TcpProxy.start("127.0.0.1", redis.port() == 1 ? 2 : 1)) {
            assertThatThrownBy(() -> LocalServerFaults.of(redis, elsewhere))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("port");
        }
    }

    @Test
    void localServerFaultsPauseKillRestartAndPartitionTheServer() throws IOException {
        LocalServerFaults faults = LocalServerFaults.of(redis, proxy);
        assertThat(faults.supported())
                .isEqualTo(EnumSet.of(
                        Fault.PAUSE_SERVER, Fault.KILL_SERVER, Fault.PARTITION, Fault.LATENCY, Fault.LOST_REPLIES));
        assertThat(pings(redis.port())).isTrue();

        faults.pauseServer();
        try {
            assertThat(pings(redis.port()))
                    .as("a paused server answers nothing")
                    .isFalse();
        } finally {
            faults.resumeServer();
        }
        assertThat(pings(redis.port())).isTrue();

        faults.partition();
        try {
            assertThat(pings(proxy.port())).as("no answer through a partition").isFalse();
            assertThat(pings(redis.port()))
                    .as("the server itself still answers")
                    .isTrue();
        } finally {
            faults.heal();
        }
        assertThat(pings(proxy.port())).isTrue();

        faults.killServer();
        assertThat(pings(redis.port())).as("a killed server answers nothing").isFalse();
        faults.restartServer();
        assertThat(pings(redis.port())).isTrue();
        assertThat(pings(proxy.port()))
                .as("the proxy reaches the restarted server")
                .isTrue();
    }

    @Test
    void localServerFaultsAddLatencyAndLoseRepliesOfAppliedRequests() throws IOException {
        LocalServerFaults faults = LocalServerFaults.of(redis, proxy);
        faults.addLatency(Duration.ofMillis(150));
        try {
            long start = System.nanoTime();
            assertThat(roundTrip(proxy.port(), "PING\r\n", 7, 2_000)).startsWith("+PONG");
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("a round trip with 150 ms added each way")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(300));
        } finally {
            faults.removeLatency();
        }

        try (Socket open = new Socket()) {
            open.connect(new InetSocketAddress("127.0.0.1", proxy.port()), 500);
            open.setSoTimeout(1_000);
            open.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(new String(open.getInputStream().readNBytes(7), StandardCharsets.US_ASCII))
                    .startsWith("+PONG");
            faults.loseReplies();
            try {
                open.setSoTimeout(300);
                open.getOutputStream().write("SET lost-reply applied\r\n".getBytes(StandardCharsets.US_ASCII));
                assertThatThrownBy(() -> open.getInputStream().read())
                        .as("the reply to a SET on a connection open when replies started to be lost")
                        .isInstanceOf(java.net.SocketTimeoutException.class);
                assertThat(roundTrip(proxy.port(), "PING\r\n", 7, 1_000))
                        .as("a connection opened afterwards")
                        .startsWith("+PONG");
            } finally {
                faults.restoreReplies();
            }
            open.setSoTimeout(1_000);
            assertThatThrownBy(() -> {
                        if (open.getInputStream().read() >= 0) {
                            throw new AssertionError("a reply on a connection that lost its replies");
                        }
                        throw new java.net.SocketException("closed");
                    })
                    .as("the connection that lost its replies is reset")
                    .isInstanceOf(java.net.SocketException.class);
        }
        assertThat(roundTrip(redis.port(), "GET lost-reply\r\n", 13, 1_000))
                .as("the SET whose reply was lost took effect")
                .contains("applied");
    }

    /** Sends {@code command} and reads up to {@code bytes} bytes of reply; empty on silence. */
    private static String roundTrip(int port, String command, int bytes, int timeoutMillis) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            socket.setSoTimeout(timeoutMillis);
            socket.getOutputStream().write(command.getBytes(StandardCharsets.US_ASCII));
            try {
                return new String(socket.getInputStream().readNBytes(bytes), StandardCharsets.US_ASCII);
            } catch (java.net.SocketTimeoutException e) {
                return "";
            }
        }
    }

    /** A Redis PING with a short timeout: true on +PONG, false on silence or a refused connection. */
    private static boolean pings(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            socket.setSoTimeout(300);
            socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            byte[] reply = in.readNBytes(7);
            return new String(reply, StandardCharsets.US_ASCII).startsWith("+PONG");
        } catch (IOException e) {
            return false;
        }
    }
}
