package io.lockstep.tck.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * Directories in memory ({@code /dev/shm}) for servers' data, deleted when the JVM exits (by a shutdown
 * hook that runs beside {@link LocalServer}'s reaper, so a file a dying server still writes may stay until
 * the machine restarts). Empty where there is no writable {@code /dev/shm}: the caller then uses its disk
 * directory.
 */
final class InMemoryDirs {

    private static final Path SHM = Path.of("/dev/shm");
    private static final Set<Path> CREATED = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(InMemoryDirs::deleteAll, "lockstep-shm-cleaner"));
    }

    private InMemoryDirs() {}

    /** A new directory in memory named {@code prefix...}, or empty if there is no writable {@code /dev/shm}. */
    static Optional<Path> create(String prefix) {
        if (!Files.isDirectory(SHM) || !Files.isWritable(SHM)) {
            return Optional.empty();
        }
        try {
            Path dir = Files.createTempDirectory(SHM, prefix);
            CREATED.add(dir);
            return Optional.of(dir);
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static void deleteAll() {
        // A server still writing may keep a file: the OS clears /dev/shm on reboot.
        CREATED.forEach(InMemoryDirs::deleteTree);
    }

    /** Deletes {@code dir} and everything in it, as far as it can: best effort, for exit hooks. */
    static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // gone already, or a file that cannot be removed: left to the system's cleaning
        }
    }
}
