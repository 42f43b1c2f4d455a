package io.lockstep.cli;

import io.lockstep.tck.servers.LocalServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Headless Debian chromium: the page's DOM after its scripts ran, and screenshots. */
final class Chromium {
    private Chromium() {}

    static String executable() {
        return LocalServer.findOnPath("chromium")
                .orElseThrow(
                        () -> new IllegalStateException(
                                "chromium was not found on PATH; install it with: apt-get install -y chromium (scripts/ensure-servers does)"));
    }

    static String dumpDom(Path html) throws IOException, InterruptedException {
        return run(html, List.of("--virtual-time-budget=10000", "--dump-dom"));
    }

    static void screenshot(Path html, Path png, int width, int height) throws IOException, InterruptedException {
        run(html, List.of("--window-size=" + width + "," + height, "--screenshot=" + png));
        if (!Files.isRegularFile(png) || Files.size(png) == 0) {
            throw new IllegalStateException("chromium wrote no screenshot to " + png);
        }
    }

    private static String run(Path html, List<String> extra) throws IOException, InterruptedException {
        Path profile = Files.createTempDirectory("lockctl-chromium-");
        Path out = Files.createTempFile("lockctl-chromium-", ".out");
        List<String> command = new ArrayList<>(List.of(
                executable(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--user-data-dir=" + profile));
        command.addAll(extra);
        command.add(html.toUri().toString());
        Process p = new ProcessBuilder(command)
                .redirectOutput(out.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("chromium did not finish within 90 s");
        }
        return Files.readString(out, StandardCharsets.UTF_8);
    }
}
