package io.lockstep.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.jdbc.internal.Dialect;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.LockProviderFactory;
import java.io.PrintWriter;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * {@code jdbc:postgresql://[user[:password]@]host[:port]/database?mode=lease}, {@code jdbc:mariadb://...}
 * and {@code jdbc:h2:...}: a {@link JdbcLockProvider} over a bounded HikariCP pool it builds and closes.
 *
 * <p>Lockstep's settings, taken out of the query (or from {@link LockConfig} properties): {@code mode}
 * ({@code lease}, the default, or {@code session}), {@code table}, {@code createSchema} (false),
 * {@code poolSize} (lease 4, session 16), {@code callTimeout} (5s), {@code sessionTimeout} (10s),
 * {@code notifications} (true), {@code driftFactor} (lease mode's clock drift allowance, in [0, 0.5),
 * default 0.01: validity is {@code leaseTime − (leaseTime × driftFactor + 2 ms)}, see {@link
 * JdbcLockProvider.Builder#driftFactor}), {@code user} and {@code password}. Every other query parameter
 * ({@code sslmode}, {@code sslrootcert}, ...) goes to the driver unchanged, so TLS is configured as the
 * driver documents it. A password is never part of a message.
 */
public final class JdbcLockProviderFactory implements LockProviderFactory {

    private static final List<String> SETTINGS = List.of(
            "mode",
            "table",
            "createSchema",
            "poolSize",
            "callTimeout",
            "sessionTimeout",
            "notifications",
            "driftFactor",
            "user",
            "password",
            Locks.PROVIDER_PROPERTY);

    @Override
    public String name() {
        return "jdbc";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("jdbc");
    }

    @Override
    public LockProvider create(LockConfig config) {
        Parsed p = Parsed.of(config);
        JdbcMode mode = JdbcMode.parse(p.setting("mode", "lease"));
        int poolSize = p.intSetting("poolSize", mode == JdbcMode.LEASE ? 4 : 16, 1, 1000);
        Duration callTimeout = p.durationSetting("callTimeout", Duration.ofSeconds(5));
        Duration sessionTimeout = p.durationSetting("sessionTimeout", JdbcLockProvider.DEFAULT_SESSION_TIMEOUT);
        boolean createSchema = p.booleanSetting("createSchema", false);
        boolean notifications = p.booleanSetting("notifications", true);
        double driftFactor = p.driftFactorSetting();
        String table = p.settings.get("table");
        if (table != null) {
            Dialect.requireTableName(table); // before anything is opened
        }

        Properties driverProps = new Properties();
        boolean serverBoundsStatements = false;
        p.settings.entrySet().stream()
                .filter(e -> e.getKey().equals("user") || e.getKey().equals("password"))
                .forEach(e -> driverProps.setProperty(e.getKey(), e.getValue()));
        if (p.driverUrl.startsWith("jdbc:postgresql:")) {
            String seconds = Long.toString(Math.max(1, (callTimeout.toMillis() + 999) / 1000));
            if (!p.driverUrl.contains("socketTimeout=")) {
                // A partitioned server must not hold a call past its bound; lock waits never block on the server.
                driverProps.setProperty("socketTimeout", Long.toString(Math.max(2, 2 * Long.parseLong(seconds))));
            }
            driverProps.setProperty("connectTimeout", seconds);
            driverProps.setProperty("loginTimeout", seconds);
            driverProps.setProperty("tcpKeepAlive", "true");
            driverProps.putIfAbsent("ApplicationName", "lockstep");
            if (!p.driverUrl.contains("options=") && !p.settings.containsKey("options")) {
                // The server bounds each statement: the same cancel (SQL state 57014) as the driver's
                // query timeout, without the driver's timer task scheduled and cancelled per statement
                // (a wake-up of its timer thread each time: measured, the largest client cost).
                driverProps.setProperty("options", "-c statement_timeout=" + Math.max(1, callTimeout.toMillis()));
                serverBoundsStatements = true;
            }
        }

        if (p.driverUrl.startsWith("jdbc:mariadb:") || p.driverUrl.startsWith("jdbc:mysql:")) {
            long ms = Math.max(1000, callTimeout.toMillis());
            driverProps.putIfAbsent("connectTimeout", Long.toString(ms));
            if (!p.driverUrl.contains("socketTimeout=")) {
                driverProps.setProperty("socketTimeout", Long.toString(2 * ms));
            }
        }

        HikariConfig hc = new HikariConfig();
        hc.setPoolName("lockstep-jdbc");
        hc.setJdbcUrl(p.driverUrl);
        hc.setDataSourceProperties(driverProps);
        hc.setMaximumPoolSize(poolSize);
        hc.setMinimumIdle(1);
        hc.setConnectionTimeout(Math.max(250, callTimeout.toMillis()));
        hc.setValidationTimeout(Math.max(250, Math.min(callTimeout.toMillis(), 5000)));
        hc.setInitializationFailTimeout(-1); // the provider's own check reports an unreachable database
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(hc);
        } catch (RuntimeException e) {
            // Not the pool's message: it quotes the driver URL, which may hold a password.
            throw new LockConfigurationException("url: cannot build a connection pool for " + p.where + " ("
                    + e.getClass().getSimpleName() + "); is the driver of this database on the class path?");
        }
        JdbcLockProvider.Builder b = JdbcLockProvider.builder(pool)
                .mode(mode)
                .createSchema(createSchema)
                .callTimeout(callTimeout)
                .sessionTimeout(sessionTimeout)
                .driftFactor(driftFactor)
                .runtime(config.runtime())
                .describedAs(p.where)
                .closeWithProvider(pool);
        if (notifications) {
            b.notifications(new UnpooledDataSource(p.driverUrl, driverProps));
        } else {
            b.notifications(false);
        }
        if (serverBoundsStatements) {
            b.statementsBoundByServer();
        }
        if (table != null) {
            b.table(table);
        }
        return b.build();
    }

    /** The URI split into the driver's URL and Lockstep's settings. */
    private static final class Parsed {
        final String driverUrl;
        final String where;
        final Map<String, String> settings = new LinkedHashMap<>();

        private Parsed(String driverUrl, String where) {
            this.driverUrl = driverUrl;
            this.where = where;
        }

        static Parsed of(LockConfig config) {
            URI uri = config.uri();
            String ssp = uri.getRawSchemeSpecificPart();
            if (ssp == null
                    || !(ssp.startsWith("postgresql:")
                            || ssp.startsWith("mariadb:")
                            || ssp.startsWith("mysql:")
                            || ssp.startsWith("h2:"))) {
                throw new LockConfigurationException("uri: expected jdbc:postgresql://, jdbc:mariadb://,"
                        + " jdbc:mysql:// or jdbc:h2:, got '" + LockConfig.redacted(uri) + "'");
            }
            if (uri.getRawFragment() != null) {
                throw new LockConfigurationException(
                        "uri: a '#' in the lock URI; percent-encode it (%23) if it is" + " part of the password");
            }
            int q = ssp.indexOf('?');
            String base = q < 0 ? ssp : ssp.substring(0, q);
            requireEncodedUserInfo(base);
            String query = q < 0 ? "" : ssp.substring(q + 1);
            Map<String, String> settings = new LinkedHashMap<>();
            // user[:password]@ in the authority: taken out of the URL, handed to the driver as properties.
            int slashes = base.indexOf("//");
            if (slashes >= 0) {
                int end = base.indexOf('/', slashes + 2);
                String authority = end < 0 ? base.substring(slashes + 2) : base.substring(slashes + 2, end);
                int at = authority.lastIndexOf('@');
                if (at >= 0) {
                    String info = authority.substring(0, at);
                    int colon = info.indexOf(':');
                    settings.put(
                            "user",
                            LockConfig.percentDecode(colon < 0 ? info : info.substring(0, colon), "the user name"));
                    if (colon >= 0) {
                        settings.put("password", LockConfig.percentDecode(info.substring(colon + 1), "the password"));
                    }
                    base = base.substring(0, slashes + 2)
                            + authority.substring(at + 1)
                            + (end < 0 ? "" : base.substring(end));
                }
            }
            List<String> driverParams = new ArrayList<>();
            for (String pair : query.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String key = LockConfig.percentDecode(eq < 0 ? pair : pair.substring(0, eq), "a query parameter");
                requireNoMisspelling(key);
                if (SETTINGS.contains(key)) {
                    settings.put(
                            key, eq < 0 ? "" : LockConfig.percentDecode(pair.substring(eq + 1), "a query parameter"));
                } else {
                    driverParams.add(pair);
                }
            }
            settings.putAll(config.properties());
            String driverUrl = "jdbc:" + base + (driverParams.isEmpty() ? "" : "?" + String.join("&", driverParams));
            Parsed parsed = new Parsed(driverUrl, describe(base));
            parsed.settings.putAll(settings);
            return parsed;
        }

        /**
         * Refuses a key that is almost one of Lockstep's settings (another case, or one letter added,
         * dropped, changed or two swapped): the driver would ignore it silently.
         */
        private static void requireNoMisspelling(String key) {
            if (SETTINGS.contains(key)) {
                return;
            }
            for (String setting : SETTINGS) {
                if (key.equalsIgnoreCase(setting)
                        || (setting.length() >= 4
                                && nearlyEqual(key.toLowerCase(Locale.ROOT), setting.toLowerCase(Locale.ROOT)))) {
                    throw new LockConfigurationException(key + ": not a setting of lock-jdbc (settings are"
                            + " case-sensitive); did you mean " + setting + "?");
                }
            }
        }

        /** Whether {@code a} and {@code b} differ by one insertion, deletion, substitution or adjacent swap. */
        static boolean nearlyEqual(String a, String b) {
            if (a.equals(b) || Math.abs(a.length() - b.length()) > 1) {
                return false;
            }
            int i = 0;
            while (i < Math.min(a.length(), b.length()) && a.charAt(i) == b.charAt(i)) {
                i++;
            }
            if (a.length() == b.length()) {
                if (a.substring(i + 1).equals(b.substring(i + 1))) {
                    return true; // one substitution
                }
                return i + 1 < a.length()
                        && a.charAt(i) == b.charAt(i + 1)
                        && a.charAt(i + 1) == b.charAt(i)
                        && a.substring(i + 2).equals(b.substring(i + 2));
            }
            return a.length() > b.length()
                    ? a.substring(i + 1).equals(b.substring(i))
                    : a.substring(i).equals(b.substring(i + 1));
        }

        /**
         * Refuses user info with a raw {@code /}, {@code ?} or {@code #}, which would cut the URI inside
         * the password (and put part of it into messages), without echoing it.
         */
        private static void requireEncodedUserInfo(String base) {
            int slashes = base.indexOf("//");
            if (slashes < 0) {
                return;
            }
            int end = base.indexOf('/', slashes + 2);
            String authority = end < 0 ? base.substring(slashes + 2) : base.substring(slashes + 2, end);
            boolean atAfterSlash = end >= 0 && base.indexOf('@', end) >= 0 && authority.indexOf('@') < 0;
            boolean oddPort = false;
            if (authority.indexOf('@') < 0 && !authority.startsWith("[")) {
                for (String host : authority.split(",")) {
                    int colon = host.indexOf(':');
                    oddPort |= colon >= 0 && !host.substring(colon + 1).matches("[0-9]*");
                }
            }
            if (atAfterSlash || oddPort) {
                throw new LockConfigurationException("uri: the user info of the lock URI holds a raw '/', '?' or"
                        + " '#'; percent-encode them in the password (%2F, %3F, %23)");
            }
        }

        private static String describe(String base) {
            String lower = base.toLowerCase(Locale.ROOT);
            String product = lower.startsWith("postgresql:")
                    ? "PostgreSQL"
                    : lower.startsWith("h2:") ? "H2" : lower.startsWith("mysql:") ? "MySQL" : "MariaDB";
            String rest = base.substring(base.indexOf(':') + 1);
            if (rest.startsWith("//")) {
                rest = rest.substring(2);
            }
            // base has no user info any more; H2 settings after ';' may hold a password: cut them off.
            int semi = rest.indexOf(';');
            return product + " at " + (semi < 0 ? rest : rest.substring(0, semi));
        }

        String setting(String key, String fallback) {
            return settings.getOrDefault(key, fallback);
        }

        int intSetting(String key, int fallback, int min, int max) {
            String raw = settings.get(key);
            if (raw == null) {
                return fallback;
            }
            try {
                int v = Integer.parseInt(raw.strip());
                if (v >= min && v <= max) {
                    return v;
                }
            } catch (NumberFormatException ignored) {
                // reported below
            }
            throw new LockConfigurationException(
                    key + ": expected a whole number from " + min + " to " + max + ", got '" + raw + "'");
        }

        Duration durationSetting(String key, Duration fallback) {
            String raw = settings.get(key);
            if (raw == null) {
                return fallback;
            }
            Duration d = LockConfig.of("jdbc://settings").withProperty(key, raw).durationProperty(key, fallback);
            if (d.isZero() || d.isNegative()) {
                throw new LockConfigurationException(key + ": expected a positive duration, got '" + raw + "'");
            }
            return d;
        }

        /** {@code driftFactor}, default {@link ClockDrift#DEFAULT_FACTOR}; refused, naming it, if not in [0, 0.5). */
        double driftFactorSetting() {
            String raw = settings.get("driftFactor");
            if (raw == null) {
                return ClockDrift.DEFAULT_FACTOR;
            }
            try {
                return ClockDrift.requireFactor(Double.parseDouble(raw.strip()));
            } catch (NumberFormatException e) {
                throw new LockConfigurationException(
                        "driftFactor: expected a number in [0, 0.5), got '" + raw + "'", e);
            } catch (IllegalArgumentException e) {
                throw new LockConfigurationException(e.getMessage(), e); // names driftFactor and the value
            }
        }

        boolean booleanSetting(String key, boolean fallback) {
            String raw = settings.get(key);
            return raw == null
                    ? fallback
                    : LockConfig.of("jdbc://settings").withProperty(key, raw).booleanProperty(key, fallback);
        }
    }

    /** One new connection per call from the driver: for the release listener, outside the bounded pool. */
    private static final class UnpooledDataSource implements DataSource {
        private final String url;
        private final Properties props;

        UnpooledDataSource(String url, Properties props) {
            this.url = url;
            this.props = props;
        }

        @Override
        public Connection getConnection() throws SQLException {
            return DriverManager.getConnection(url, props);
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            throw new SQLFeatureNotSupportedException("credentials come from the lock URI");
        }

        @Override
        public PrintWriter getLogWriter() {
            return new PrintWriter(System.err);
        }

        @Override
        public void setLogWriter(PrintWriter out) {}

        @Override
        public void setLoginTimeout(int seconds) {}

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }

    /** {@inheritDoc} */
    @Override
    public java.util.List<io.lockstep.spi.ProviderKind> kinds() {
        return java.util.List.of(
                kind("postgresql lease", "jdbc:postgresql://host/db (mode=lease, the default)", false, true),
                kind("postgresql session", "jdbc:postgresql://host/db?mode=session", true, true),
                kind(
                        "mariadb lease",
                        "jdbc:mariadb://host/db, jdbc:mysql:// to a MariaDB server, jdbc:h2: (mode=lease)",
                        false,
                        false),
                kind(
                        "mariadb session",
                        "jdbc:mariadb://host/db?mode=session, jdbc:mysql:// to a MariaDB server, jdbc:h2:",
                        true,
                        false),
                kind(
                        "postgresql lease notifications=false",
                        "jdbc:postgresql://host/db?notifications=false",
                        false,
                        false));
    }

    /** What a provider of {@code mode} claims; waiters are notified only on PostgreSQL with notifications on. */
    private static io.lockstep.spi.ProviderKind kind(String label, String uriForm, boolean session, boolean notified) {
        return new io.lockstep.spi.ProviderKind(
                label, uriForm, io.lockstep.jdbc.internal.SqlBackend.declaredInfo(session, notified));
    }
}
