package io.lockstep.tck.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Directories in memory ({@code /dev/shm}) for servers' data, deleted when the JVM exits, after the servers
 * were killed ({@link ExitCleanup}). Empty where there is no writable {@code /dev/shm}: the caller then uses its disk
 * directory.
 */
final class InMemoryDirs {

    private static final Path SHM = Path.of("/dev/shm");

    private InMemoryDirs() {}

    /** A new directory in memory named {@code prefix...}, or empty if there is no writable {@code /dev/shm}. */
    static Optional<Path> create(String prefix) {
        if (!Files.isDirectory(SHM) || !Files.isWritable(SHM)) {
            return Optional.empty();
        }
        try {
            Path dir = Files.createTempDirectory(SHM, prefix);
            ExitCleanup.deleteAtExit(dir);
            return Optional.of(dir);
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
