package io.lockstep.examples.springboot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Where the report writes what it did: one line per event, {@code <epoch ms> <pid> <event> [fence]},
 * appended to a file every instance shares (appends of one short line are atomic on a local file
 * system). Stands in for the database a real report would write, fenced.
 */
@Component
public class Ledger {

    private final Path file;
    private final long pid = ProcessHandle.current().pid();

    /** A ledger in {@code report.ledger}. */
    public Ledger(@Value("${report.ledger}") Path file) {
        this.file = file;
    }

    /** Records that this instance is up and scheduling. */
    @EventListener(ApplicationReadyEvent.class)
    public void ready() {
        append("ready", -1);
    }

    /** Records an event of the report with its fencing token. */
    public void append(String event, long fence) {
        String line = System.currentTimeMillis() + " " + pid + " " + event + (fence < 0 ? "" : " " + fence) + "\n";
        try {
            Files.writeString(file, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
