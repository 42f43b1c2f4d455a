package io.lockstep.examples.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.tck.servers.RedisServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example after Spring AOT processing (spring-boot-maven-plugin's {@code process-aot}, bound before the
 * tests in the pom), started as a JVM with {@code -Dspring.aot.enabled=true}: Boot then takes its bean
 * definitions from the generated initializer instead of scanning and evaluating conditions, and refuses to
 * start without one. A report run under {@code @Locked} in that JVM shows that the starter's
 * auto-configuration, its provider and its {@code @Locked} proxy survive AOT processing; the generated
 * native-image metadata must carry the starter's runtime hints. No native image is built (no GraalVM here).
 */
class AotModeTest {

    private static final String INITIALIZER = ReportApplication.class.getName() + "__ApplicationContextInitializer";

    @Test
    @DisplayName("after AOT processing, the application starts in AOT mode and runs the report under @Locked")
    void runsInAotMode(@TempDir Path dir) throws Exception {
        assertThat(Class.forName(INITIALIZER))
                .as("the initializer process-aot generates")
                .isNotNull();
        Path ledger = dir.resolve("ledger.txt");
        Path log = dir.resolve("aot.log");
        try (RedisServer redis = RedisServer.start()) {
            Process app = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-Xmx160m",
                            "-XX:+UseSerialGC",
                            "-XX:TieredStopAtLevel=1",
                            "-Dspring.aot.enabled=true",
                            "-cp",
                            System.getProperty("java.class.path"),
                            ReportApplication.class.getName(),
                            "--lockstep.uri=" + redis.uri(),
                            "--report.ledger=" + ledger)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (!ranTheReport(ledger) && app.isAlive() && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                assertThat(ranTheReport(ledger))
                        .as("a report run under @Locked in AOT mode; the JVM's log:%n%s", read(log))
                        .isTrue();
                assertThat(read(log)).doesNotContain("ERROR");
            } finally {
                app.destroy();
                if (!app.waitFor(15, TimeUnit.SECONDS)) {
                    app.destroyForcibly().waitFor(15, TimeUnit.SECONDS);
                }
            }
        }
    }

    @Test
    @DisplayName("the native-image metadata process-aot writes carries the starter's runtime hints")
    void metadataCarriesTheStartersHints() throws IOException {
        Path metadata = Path.of("target", "spring-aot", "main", "resources", "META-INF", "native-image");
        StringBuilder all = new StringBuilder();
        try (Stream<Path> files = Files.walk(metadata)) {
            for (Path json : files.filter(f -> f.toString().endsWith(".json")).toList()) {
                all.append(Files.readString(json, StandardCharsets.UTF_8));
            }
        }
        assertThat(all)
                .as("LockstepRuntimeHints: the ServiceLoader file, @Locked, the properties")
                .contains("io.lockstep.spi.LockProviderFactory")
                .contains("io.lockstep.spring.boot.Locked")
                .contains("io.lockstep.spring.boot.autoconfigure.LockstepProperties");
    }

    private static boolean ranTheReport(Path ledger) throws IOException {
        if (!Files.exists(ledger)) {
            return false;
        }
        List<String> lines = Files.readAllLines(ledger, StandardCharsets.UTF_8);
        return lines.stream().anyMatch(line -> line.split(" ").length == 4 && line.split(" ")[2].equals("end"));
    }

    private static String read(Path log) throws IOException {
        return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    }
}
