package io.lockstep.tck.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy inside the test's JVM, listening on a loopback ephemeral port and forwarding every
 * connection to one server, that injects network faults between a client and its server.
 *
 * <pre>{@code
 * try (TcpProxy proxy = TcpProxy.start("127.0.0.1", redis.port())) {
 *     LockProvider locks = Locks.open("redis://127.0.0.1:" + proxy.port());
 *     proxy.stall();   // a partition: nothing passes, no connection is reset
 *     proxy.heal();    // held bytes flow again, as TCP retransmission would deliver them
 * }
 * }</pre>
 *
 * <p>Faults apply to every connection, open or future, until {@link #heal()}:
 *
 * <ul>
 *   <li>{@link #delay(Direction, Duration)}: each chunk is forwarded that much later than it arrived;
 *   <li>{@link #stall()} and {@link #cut(Direction)}: bytes are held (not read, so TCP flow control
 *       pushes back on the sender) and the sockets stay open; they are delivered after {@link #heal()};
 *   <li>{@link #drop()} and {@link #drop(Direction)}: bytes are read and silently discarded;
 *   <li>{@link #reset()}: every open connection is reset (RST) on both sides at once;
 *   <li>{@link #loseReplies()}: the connections open now discard what the server sends back (the
 *       server still gets and applies every request), until {@link #resetConnectionsLosingReplies()};
 *       connections opened later are not affected.
 * </ul>
 *
 * <p>A new connection is always accepted (the kernel completes the handshake), so during a stall a
 * client sees a connection that never answers, which is what a partition looks like to it.
 *
 * <p>Thread-safe. One thread serves every connection; each fault method returns once the proxy has
 * applied it, so nothing is forwarded against it afterwards. {@link #close()} stops the thread and
 * closes every socket.
 */
public final class TcpProxy implements AutoCloseable {

    /** Which way bytes flow through the proxy. */
    public enum Direction {
        /** From the client (who connected to the proxy) to the server. */
        CLIENT_TO_SERVER,
        /** From the server back to the client. */
        SERVER_TO_CLIENT
    }

    private enum Mode {
        FORWARD,
        HOLD,
        DROP
    }

    private static final Logger log = LoggerFactory.getLogger(TcpProxy.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /** Connections beyond this are reset at once; a test never needs more. */
    private static final int MAX_CONNECTIONS = 512;
    /** Bytes queued per direction before the proxy stops reading from the sender. */
    private static final int MAX_QUEUED_BYTES = 1 << 20;

    private static final int CHUNK = 16 * 1024;
    private static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(10);

    private final InetSocketAddress target;
    private final Selector selector;
    private final ServerSocketChannel server;
    private final Thread loop;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final List<Connection> connections = new ArrayList<>();
    // Read and written by the loop thread only.
    private final Map<Direction, Mode> modes = new EnumMap<>(Direction.class);
    private final Map<Direction, Long> delays = new EnumMap<>(Direction.class);
    private volatile boolean closed;
    private final AtomicInteger accepted = new AtomicInteger();

    private TcpProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        for (Direction d : Direction.values()) {
            modes.put(d, Mode.FORWARD);
            delays.put(d, 0L);
        }
        this.selector = Selector.open();
        this.server = ServerSocketChannel.open();
        try {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException e) {
            server.close();
            selector.close();
            throw e;
        }
        this.loop = new Thread(this::run, "lockstep-tcp-proxy-" + INSTANCES.incrementAndGet());
        loop.setDaemon(true);
    }

    /**
     * Starts a proxy on a loopback ephemeral port that forwards to {@code host:port}.
     *
     * @throws UncheckedIOException if the listening socket cannot be opened
     */
    public static TcpProxy start(String host, int port) {
        Objects.requireNonNull(host, "host");
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be between 1 and 65535, was " + port);
        }
        try {
            TcpProxy proxy = new TcpProxy(new InetSocketAddress(host, port));
            proxy.loop.start();
            log.debug("TCP proxy on port {} forwards to {}", proxy.port(), proxy.target);
            return proxy;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start a TCP proxy to " + host + ":" + port, e);
        }
    }

    /** The loopback host clients connect to. */
    public String host() {
        return "127.0.0.1";
    }

    /** The port clients connect to instead of the server's. */
    public int port() {
        return server.socket().getLocalPort();
    }

    /** The server the proxy forwards to. */
    public InetSocketAddress target() {
        return target;
    }

    /** How many client connections the proxy accepted since it started (including reset ones). */
    public int acceptedConnections() {
        return accepted.get();
    }

    /** How many connections are open through the proxy now. */
    public int openConnections() {
        return onLoop(connections::size);
    }

    /**
     * Adds {@code delay} to every chunk flowing in {@code direction}, for chunks that arrive from now
     * on; {@link Duration#ZERO} removes it.
     */
    public TcpProxy delay(Direction direction, Duration delay) {
        Objects.requireNonNull(direction, "direction");
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative() || delay.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new IllegalArgumentException("delay must be between 0 and 10 minutes, was " + delay);
        }
        return apply(() -> delays.put(direction, delay.toNanos()));
    }

    /** Stops forwarding in both directions without resetting anything: a silent partition. */
    public TcpProxy stall() {
        return apply(() -> {
            modes.put(Direction.CLIENT_TO_SERVER, Mode.HOLD);
            modes.put(Direction.SERVER_TO_CLIENT, Mode.HOLD);
        });
    }

    /** Stops forwarding in one direction only (bytes are held, sockets stay open): a one-way partition. */
    public TcpProxy cut(Direction direction) {
        Objects.requireNonNull(direction, "direction");
        return apply(() -> modes.put(direction, Mode.HOLD));
    }

    /** Discards every byte in both directions, keeping the sockets open. */
    public TcpProxy drop() {
        return apply(() -> {
            modes.put(Direction.CLIENT_TO_SERVER, Mode.DROP);
            modes.put(Direction.SERVER_TO_CLIENT, Mode.DROP);
        });
    }

    /** Discards every byte flowing in {@code direction}, keeping the sockets open. */
    public TcpProxy drop(Direction direction) {
        Objects.requireNonNull(direction, "direction");
        return apply(() -> modes.put(direction, Mode.DROP));
    }

    /**
     * Resets every open connection now: both the client's and the server's side get a TCP RST (linger
     * zero, then close). Connections made afterwards are forwarded as usual.
     */
    public TcpProxy reset() {
        return apply(() -> {
            for (Connection c : List.copyOf(connections)) {
                c.abort();
            }
        });
    }

    /**
     * Makes every connection open now discard what the server sends back from now on, while requests
     * still reach the server: a lost reply to a request that took effect. Such a connection is dead to
     * its client (it times out and opens another); connections opened later work. {@link #heal()} does
     * not revive them; {@link #resetConnectionsLosingReplies()} resets them.
     */
    public TcpProxy loseReplies() {
        return apply(() -> {
            for (Connection c : connections) {
                c.downstream.losing = true;
            }
        });
    }

    /** Resets (RST) every connection that {@link #loseReplies()} made lose its replies, so its client notices. */
    public TcpProxy resetConnectionsLosingReplies() {
        return apply(() -> {
            for (Connection c : List.copyOf(connections)) {
                if (c.downstream.losing) {
                    c.abort();
                }
            }
        });
    }

    /**
     * Ends every fault: forwarding resumes in both directions without delay, and bytes held by a stall
     * or cut are delivered now. Bytes dropped stay lost; connections reset stay closed; connections
     * losing their replies keep losing them.
     */
    public TcpProxy heal() {
        return apply(() -> {
            for (Direction d : Direction.values()) {
                modes.put(d, Mode.FORWARD);
                delays.put(d, 0L);
            }
            long now = System.nanoTime();
            for (Connection c : connections) {
                c.upstream.releaseDelayed(now);
                c.downstream.releaseDelayed(now);
            }
        });
    }

    /** Stops the proxy: closes every connection and the listening socket, and ends its thread. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        selector.wakeup();
        if (Thread.currentThread() != loop) {
            try {
                loop.join(CONTROL_TIMEOUT.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (loop.isAlive()) {
            log.warn("TCP proxy thread {} did not stop within {}", loop.getName(), CONTROL_TIMEOUT);
        }
    }

    @Override
    public String toString() {
        return "TcpProxy[127.0.0.1:" + port() + " -> " + target + "]";
    }

    private TcpProxy apply(Runnable change) {
        onLoop(() -> {
            change.run();
            return null;
        });
        return this;
    }

    /** Runs {@code task} on the loop thread (between two I/O steps) and waits for it. */
    private <T> T onLoop(java.util.function.Supplier<T> task) {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
        CompletableFuture<T> done = new CompletableFuture<>();
        tasks.add(() -> {
            try {
                done.complete(task.get());
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        selector.wakeup();
        try {
            return done.get(CONTROL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while changing " + this, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("changing " + this + " failed", e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException(this + " did not apply a change within " + CONTROL_TIMEOUT, e);
        }
    }

    private void run() {
        try {
            while (!closed) {
                long timeoutMillis = step();
                selector.select(timeoutMillis);
                for (SelectionKey key : selector.selectedKeys()) {
                    handle(key);
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException | ClosedSelectorException e) {
            if (!closed) {
                log.error("TCP proxy {} stopped: {}", this, e.toString());
            }
        } catch (RuntimeException | Error e) {
            log.error("TCP proxy {} failed", this, e);
        } finally {
            closed = true;
            shutdown();
        }
    }

    /** Runs queued control tasks, flushes due bytes, sets interest; returns the select timeout in ms. */
    private long step() {
        Runnable task;
        while ((task = tasks.poll()) != null) {
            task.run();
        }
        long now = System.nanoTime();
        long nextDue = Long.MAX_VALUE;
        for (Connection c : List.copyOf(connections)) {
            nextDue = Math.min(nextDue, c.pump(now));
        }
        if (nextDue == Long.MAX_VALUE) {
            return 0; // block until an event or a wakeup
        }
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextDue - now) + 1);
    }

    private void handle(SelectionKey key) {
        if (!key.isValid()) {
            return;
        }
        if (key.channel() == server) {
            accept();
            return;
        }
        Connection c = (Connection) key.attachment();
        if (c == null || c.closed) {
            return;
        }
        try {
            if (key.isConnectable()) {
                c.finishConnect();
            }
            if (key.isValid() && key.isReadable()) {
                c.read((SocketChannel) key.channel());
            }
            if (key.isValid() && key.isWritable()) {
                c.pump(System.nanoTime());
            }
        } catch (IOException e) {
            log.debug("TCP proxy connection {} ended: {}", c, e.toString());
            c.abort();
        }
    }

    private void accept() {
        SocketChannel client;
        try {
            client = server.accept();
        } catch (IOException e) {
            log.debug("TCP proxy accept failed: {}", e.toString());
            return;
        }
        if (client == null) {
            return;
        }
        accepted.incrementAndGet();
        if (connections.size() >= MAX_CONNECTIONS) {
            log.warn("TCP proxy {} has {} connections; resetting a new one", this, MAX_CONNECTIONS);
            abortQuietly(client);
            return;
        }
        SocketChannel upstream = null;
        try {
            client.configureBlocking(false);
            client.setOption(StandardSocketOptions.TCP_NODELAY, true);
            upstream = SocketChannel.open();
            upstream.configureBlocking(false);
            upstream.setOption(StandardSocketOptions.TCP_NODELAY, true);
            Connection c = new Connection(client, upstream);
            connections.add(c);
            c.clientKey = client.register(selector, 0, c);
            boolean connected = upstream.connect(target);
            c.serverKey = upstream.register(selector, connected ? 0 : SelectionKey.OP_CONNECT, c);
            c.connected = connected;
        } catch (IOException e) {
            log.debug("TCP proxy could not connect to {}: {}", target, e.toString());
            abortQuietly(client);
            if (upstream != null) {
                abortQuietly(upstream);
            }
            connections.removeIf(x -> x.client == client);
        }
    }

    private void shutdown() {
        for (Connection c : List.copyOf(connections)) {
            c.abort();
        }
        try {
            server.close();
        } catch (IOException e) {
            log.debug("closing the proxy's listening socket failed: {}", e.toString());
        }
        try {
            selector.close();
        } catch (IOException e) {
            log.debug("closing the proxy's selector failed: {}", e.toString());
        }
        Runnable task;
        while ((task = tasks.poll()) != null) {
            task.run(); // completes waiting callers; the state they change is gone anyway
        }
    }

    private static void abortQuietly(SocketChannel channel) {
        try {
            channel.setOption(StandardSocketOptions.SO_LINGER, 0);
        } catch (IOException | RuntimeException e) {
            // already closed or never connected: closing is all that is left
        }
        try {
            channel.close();
        } catch (IOException e) {
            // nothing more to do
        }
    }

    /** Bytes read from one side and not yet written to the other. */
    private final class Pipe {
        final Direction direction;
        final ArrayDeque<ByteBuffer> chunks = new ArrayDeque<>();
        final ArrayDeque<Long> due = new ArrayDeque<>();
        int queuedBytes;
        boolean losing;
        boolean writeBlocked;
        boolean sourceEnded;
        boolean outputShut;

        Pipe(Direction direction) {
            this.direction = direction;
        }

        boolean wantsRead() {
            return !sourceEnded && modes.get(direction) != Mode.HOLD && queuedBytes < MAX_QUEUED_BYTES;
        }

        void add(ByteBuffer chunk, long now) {
            if (modes.get(direction) == Mode.DROP || losing) {
                return;
            }
            chunks.add(chunk);
            due.add(now + delays.get(direction));
            queuedBytes += chunk.remaining();
        }

        void releaseDelayed(long now) {
            int n = due.size();
            for (int i = 0; i < n; i++) {
                due.add(Math.min(due.remove(), now));
            }
        }
    }

    /** One client connection and its connection to the server. */
    private final class Connection {
        final SocketChannel client;
        final SocketChannel server;
        final Pipe upstream = new Pipe(Direction.CLIENT_TO_SERVER);
        final Pipe downstream = new Pipe(Direction.SERVER_TO_CLIENT);

        @Nullable
        SelectionKey clientKey;

        @Nullable
        SelectionKey serverKey;

        boolean connected;
        boolean closed;

        Connection(SocketChannel client, SocketChannel server) {
            this.client = client;
            this.server = server;
        }

        void finishConnect() throws IOException {
            if (server.finishConnect()) {
                connected = true;
            }
        }

        void read(SocketChannel from) throws IOException {
            Pipe pipe = from == client ? upstream : downstream;
            if (!pipe.wantsRead()) {
                return;
            }
            ByteBuffer buffer = ByteBuffer.allocate(CHUNK);
            int n = from.read(buffer);
            if (n < 0) {
                pipe.sourceEnded = true;
            } else if (n > 0) {
                buffer.flip();
                pipe.add(buffer, System.nanoTime());
            }
            pump(System.nanoTime());
        }

        /** Writes what is due, updates interest; returns the next due time of held bytes, or MAX_VALUE. */
        long pump(long now) {
            if (closed) {
                return Long.MAX_VALUE;
            }
            try {
                long next = Math.min(flush(upstream, server, now), flush(downstream, client, now));
                if (upstream.outputShut && downstream.outputShut) {
                    close();
                    return Long.MAX_VALUE;
                }
                updateInterest();
                return next;
            } catch (IOException e) {
                log.debug("TCP proxy connection {} ended: {}", this, e.toString());
                abort();
                return Long.MAX_VALUE;
            }
        }

        private long flush(Pipe pipe, SocketChannel to, long now) throws IOException {
            if (!connected || modes.get(pipe.direction) == Mode.HOLD) {
                return Long.MAX_VALUE;
            }
            while (!pipe.chunks.isEmpty()) {
                long dueAt = pipe.due.element();
                if (dueAt - now > 0) {
                    return dueAt;
                }
                ByteBuffer chunk = pipe.chunks.element();
                int written = to.write(chunk);
                pipe.queuedBytes -= written;
                pipe.writeBlocked = chunk.hasRemaining();
                if (pipe.writeBlocked) {
                    return Long.MAX_VALUE; // the socket's buffer is full: OP_WRITE will wake us
                }
                pipe.chunks.remove();
                pipe.due.remove();
            }
            if (pipe.sourceEnded && !pipe.outputShut) {
                to.shutdownOutput();
                pipe.outputShut = true;
            }
            return Long.MAX_VALUE;
        }

        private void updateInterest() {
            if (clientKey == null || serverKey == null || !clientKey.isValid() || !serverKey.isValid()) {
                return;
            }
            if (!connected) {
                clientKey.interestOps(0);
                return;
            }
            int clientOps = upstream.wantsRead() ? SelectionKey.OP_READ : 0;
            int serverOps = downstream.wantsRead() ? SelectionKey.OP_READ : 0;
            if (downstream.writeBlocked && modes.get(Direction.SERVER_TO_CLIENT) != Mode.HOLD) {
                clientOps |= SelectionKey.OP_WRITE;
            }
            if (upstream.writeBlocked && modes.get(Direction.CLIENT_TO_SERVER) != Mode.HOLD) {
                serverOps |= SelectionKey.OP_WRITE;
            }
            clientKey.interestOps(clientOps);
            serverKey.interestOps(serverOps);
        }

        void close() {
            if (closed) {
                return;
            }
            closed = true;
            connections.remove(this);
            try {
                client.close();
            } catch (IOException e) {
                // closing is all that is left
            }
            try {
                server.close();
            } catch (IOException e) {
                // closing is all that is left
            }
        }

        void abort() {
            if (closed) {
                return;
            }
            closed = true;
            connections.remove(this);
            abortQuietly(client);
            abortQuietly(server);
        }

        @Override
        public String toString() {
            return "connection " + client.socket().getPort() + " -> " + target;
        }
    }
}
