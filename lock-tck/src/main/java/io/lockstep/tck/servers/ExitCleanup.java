package io.lockstep.tck.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What the kit's servers leave when the JVM exits, and the one shutdown hook that clears it: first every
 * server process still running is killed (and waited for, at most 2 s in all), then every work and data
 * directory is deleted. One hook, in this order, so that no server still writes into a directory being
 * deleted. The hook is registered when this class is first used (when the first server is made), never
 * during shutdown, where registering a hook fails.
 */
final class ExitCleanup {

    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();
    private static final Set<Path> DIRS = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ExitCleanup::run, "lockstep-local-server-reaper"));
    }

    private ExitCleanup() {}

    /** Kills {@code process} when the JVM exits unless it has ended by then. */
    static void killAtExit(Process process) {
        LIVE.add(process);
        process.onExit().thenRun(() -> LIVE.remove(process));
    }

    /** Deletes {@code dir} and everything in it when the JVM exits. */
    static void deleteAtExit(Path dir) {
        DIRS.add(dir);
    }

    private static void run() {
        LIVE.forEach(Process::destroyForcibly);
        CompletableFuture.allOf(LIVE.stream().map(Process::onExit).toArray(CompletableFuture[]::new))
                .completeOnTimeout(null, 2, TimeUnit.SECONDS)
                .join();
        DIRS.forEach(ExitCleanup::deleteTree);
        // A server that was shutting down may have written a file during the first walk.
        DIRS.stream().filter(Files::exists).forEach(ExitCleanup::deleteTree);
    }

    /** Deletes {@code dir} and everything in it, as far as it can: best effort, for the exit hook. */
    private static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // gone already, or a file that cannot be removed: left to the system's cleaning
        }
    }
}
