package io.lockstep.tck.servers;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A MariaDB server ({@code mariadbd}) on loopback with a free port and a fresh data directory made
 * by {@code mariadb-install-db} (Debian package {@code mariadb-server}), its socket and pid file in its
 * own temporary directory; user {@code root} without a password. Never touches a MariaDB or MySQL the
 * machine runs on its usual port. When this JVM runs as root the server drops to the {@code mysql}
 * account ({@code --user=mysql}) and the directory is handed to it. One process: {@link #pause()} and
 * {@link #kill()} act on all of it; a restart recovers from InnoDB's log.
 *
 * <pre>{@code
 * try (MariaDbServer db = MariaDbServer.start()) {
 *     Connection c = DriverManager.getConnection(db.jdbcUrl());
 * }
 * }</pre>
 */
public final class MariaDbServer extends LocalServer {

    /** The command that installs the server on Debian. */
    public static final String INSTALL = "apt-get install -y mariadb-server";

    /** The superuser; it logs in without a password from loopback. */
    public static final String USER = "root";

    private MariaDbServer() {
        super("mariadbd", INSTALL);
    }

    /**
     * Runs {@code mariadb-install-db} into a new temporary directory and starts the server on a free port.
     *
     * @throws IllegalStateException naming the install command if MariaDB is not installed
     */
    public static MariaDbServer start() {
        MariaDbServer server = new MariaDbServer();
        try {
            server.installDb();
            server.startProcess();
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    /** {@code jdbc:mariadb://127.0.0.1:<port>/mysql?user=root}. */
    public String jdbcUrl() {
        return "jdbc:mariadb://" + host() + ":" + port() + "/mysql?user=" + USER;
    }

    @Override
    protected Optional<String> locateExecutable() {
        Optional<String> onPath = findOnPath("mariadbd");
        if (onPath.isPresent()) {
            return onPath;
        }
        return Files.isExecutable(Path.of("/usr/sbin/mariadbd")) ? Optional.of("/usr/sbin/mariadbd") : Optional.empty();
    }

    private Path dataDir() {
        return workDir().resolve("data");
    }

    private void installDb() {
        String install = findOnPath("mariadb-install-db")
                .or(() -> findOnPath("mysql_install_db"))
                .orElseThrow(() -> new IllegalStateException(
                        "mariadb-install-db was not found on PATH; install it with: " + INSTALL));
        List<String> command = new ArrayList<>(List.of(
                install,
                "--no-defaults",
                "--datadir=" + dataDir(),
                "--auth-root-authentication-method=normal",
                "--skip-test-db"));
        if (runningAsRoot()) {
            command.add("--user=mysql");
        }
        try {
            Files.createDirectories(dataDir());
            handToServerUser(workDir());
            handToServerUser(dataDir());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        runSetup("mariadb-install-db", command);
    }

    @Override
    protected List<String> command(String executable, int port, Path workDir) {
        List<String> command = new ArrayList<>(List.of(
                executable,
                "--no-defaults",
                "--datadir=" + dataDir(),
                "--port=" + port,
                "--bind-address=127.0.0.1",
                "--socket=" + workDir.resolve("mysqld.sock"),
                "--pid-file=" + workDir.resolve("mysqld.pid"),
                "--skip-log-bin",
                "--innodb-buffer-pool-size=32M",
                "--innodb-flush-log-at-trx-commit=2", // a killed process loses nothing the kernel has
                "--max-connections=300"));
        if (runningAsRoot()) {
            command.add("--user=mysql");
        }
        return command;
    }

    /** Readiness: the server's first packet is a handshake whose protocol version is 10. */
    @Override
    protected boolean answers(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host(), port), 500);
            socket.setSoTimeout(1000);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] header = new byte[4];
            in.readFully(header);
            return in.read() == 10;
        } catch (IOException e) {
            return false;
        }
    }

    private static void handToServerUser(Path dir) {
        if (!runningAsRoot()) {
            return;
        }
        try {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (IOException e) {
            throw new UncheckedIOException("could not open " + dir + " to the mysql account", e);
        }
        handTo(dir, "mysql");
    }
}
