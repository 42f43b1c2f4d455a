package io.lockstep.tck.servers;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for servers that bind them late: a ZooKeeper member's quorum port, which only the
 * leader binds, and any server killed and restarted on its port. A port the kernel chose is in its
 * ephemeral range, where an outgoing connection's local port or another server started on port 0 may
 * take it before the server binds it (again); a ZooKeeper member whose quorum port was taken can never
 * lead ("Couldn't bind ... Address already in use"), and an ensemble that needs it as leader stays
 * without one. These ports come from below the ephemeral range, which the kernel never hands out on its
 * own, are checked free, and are reserved across this machine's JVMs by a lock on a file named after
 * the port, held for the life of this JVM.
 */
final class ReservedPorts {

    /** The lowest port handed out. */
    static final int LOWEST = 10_000;

    private static final Path DIR = Path.of(System.getProperty("java.io.tmpdir"), "lockstep-reserved-ports");

    /** The reservations this JVM holds, until it exits. */
    private static final List<FileChannel> HELD = new ArrayList<>();

    private static final Set<Integer> HELD_PORTS = new HashSet<>();

    private ReservedPorts() {}

    /**
     * A port below the kernel's ephemeral range, free now and reserved for this JVM's life; the kernel's
     * own choice where that range leaves too little room below it.
     */
    static synchronized int reserve() {
        int below = ephemeralLow();
        if (below - LOWEST < 1_000) {
            return LocalServer.kernelChosenPort();
        }
        try {
            Files.createDirectories(DIR);
            for (int attempt = 0; attempt < 1_000; attempt++) {
                int port = ThreadLocalRandom.current().nextInt(LOWEST, below);
                if (HELD_PORTS.contains(port)) {
                    continue;
                }
                FileChannel channel = FileChannel.open(
                        DIR.resolve(Integer.toString(port)), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock lock = channel.tryLock();
                if (lock == null || !bindable(port)) {
                    channel.close(); // releases the lock, if taken
                    continue;
                }
                HELD.add(channel);
                HELD_PORTS.add(port);
                return port;
            }
        } catch (IOException e) {
            // No shared directory to reserve in (another user's, read-only): the kernel's choice, as before.
            return LocalServer.kernelChosenPort();
        }
        throw new IllegalStateException("no free port between " + LOWEST + " and " + below + " after 1000 tries");
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The lowest port of the kernel's ephemeral range (Linux's setting; 32768, its default, elsewhere).
     * Read line by line: {@code Files.readString} sees a procfs file's size as 0 and returns one byte.
     */
    private static int ephemeralLow() {
        try (BufferedReader reader = Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
            String range = reader.readLine();
            return Integer.parseInt(range.strip().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }
}
