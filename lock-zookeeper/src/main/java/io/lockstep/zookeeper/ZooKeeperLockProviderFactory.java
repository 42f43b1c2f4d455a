package io.lockstep.zookeeper;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.spi.LockProviderFactory;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.jspecify.annotations.Nullable;

/**
 * Builds {@link ZooKeeperLockProvider}s from {@code zookeeper://[user:password@]host[:port][,host[:port]...][/chroot]}
 * URIs. The user info, if any, is a ZooKeeper digest identity ({@code addauth digest user:password}).
 *
 * <p>Settings (query parameters or {@link LockConfig} properties): {@code sessionTimeout} (default
 * {@code 30s}; the server must grant exactly this, or the provider is refused), {@code
 * connectionTimeout} (default {@code 5s}: how long to wait for a connection, at start and per call),
 * {@code basePath} (default {@code /lockstep}), {@code acl} ({@code open}, {@code creator} or {@code
 * creator-read}; default {@code creator} with credentials, else {@code open}), {@code user} and {@code
 * password} (instead of the user info), {@code provider}. Any other setting is refused, naming the known
 * ones. Passwords never appear in messages, logs or {@code toString()}.
 *
 * <p>Creating a provider connects, checks that the server granted the session timeout, that the chroot
 * exists and that the credentials may create and delete nodes under the base path; each failure is a
 * {@link LockConfigurationException} naming the setting, an unreachable ensemble a {@link
 * BackendUnavailableException}.
 */
public final class ZooKeeperLockProviderFactory implements LockProviderFactory {

    static final Set<String> KNOWN = Set.of(
            "sessionTimeout", "connectionTimeout", "basePath", "acl", "user", "password", Locks.PROVIDER_PROPERTY);

    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("zookeeper");
    }

    @Override
    public LockProvider create(LockConfig config) {
        Settings s = Settings.of(config);
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(s.hosts + s.chroot)
                .sessionTimeoutMs((int) s.sessionTimeout.toMillis())
                .connectionTimeoutMs((int) s.connectionTimeout.toMillis())
                // No retry inside Curator: a create retried there after a lost reply would queue twice.
                // Lockstep's own retry (with backoff) wraps every call and finds the first node by token.
                .retryPolicy(new RetryNTimes(0, 0))
                .aclProvider(new FixedAcl(s.acl));
        if (s.user != null) {
            builder.authorization("digest", (s.user + ":" + s.password).getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework curator = builder.build();
        curator.start();
        try {
            check(curator, s);
        } catch (RuntimeException e) {
            curator.close();
            throw e;
        }
        return ZooKeeperLockProvider.builder(curator)
                .basePath(s.basePath)
                .acl(s.acl)
                .runtime(config.runtime())
                .closeClient(true)
                .describedAs(s.where())
                .build();
    }

    private static void check(CuratorFramework curator, Settings s) {
        try {
            if (!curator.blockUntilConnected((int) s.connectionTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new BackendUnavailableException(
                        "could not connect to ZooKeeper at " + s.where() + " within connectionTimeout="
                                + s.connectionTimeout,
                        null,
                        true);
            }
            long negotiated = curator.getZookeeperClient().getZooKeeper().getSessionTimeout();
            if (negotiated != s.sessionTimeout.toMillis()) {
                throw new LockConfigurationException("sessionTimeout=" + s.sessionTimeout
                        + " was negotiated to " + negotiated + " ms by ZooKeeper at " + s.where()
                        + " (outside its minSessionTimeout..maxSessionTimeout); ask for a sessionTimeout the server"
                        + " grants, such as " + Duration.ofMillis(negotiated));
            }
            if (!s.chroot.isEmpty() && curator.checkExists().forPath("/") == null) {
                throw new LockConfigurationException("chroot '" + s.chroot + "' does not exist on ZooKeeper at "
                        + s.hosts + "; create it first (zkCli.sh create " + s.chroot + ") or remove it from the URI");
            }
            try {
                curator.create()
                        .creatingParentsIfNeeded()
                        .withMode(CreateMode.PERSISTENT)
                        .withACL(s.acl, true)
                        .forPath(s.basePath);
            } catch (KeeperException.NodeExistsException exists) {
                // Made by an earlier provider.
            } catch (KeeperException.NoAuthException e) {
                throw credentialsRefused(s, List.of());
            }
            List<ACL> acl;
            try {
                acl = curator.getACL().forPath(s.basePath);
            } catch (KeeperException.NoAuthException e) {
                // Since ZooKeeper 3.9 reading an ACL needs READ: these credentials may not even look.
                throw credentialsRefused(s, List.of());
            }
            if (!mayLock(acl, s)) {
                throw credentialsRefused(s, acl);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendUnavailableException("interrupted while connecting to ZooKeeper at " + s.where(), e);
        } catch (LockConfigurationException | BackendUnavailableException e) {
            throw e;
        } catch (Exception e) {
            throw new BackendUnavailableException(
                    "ZooKeeper at " + s.where() + " failed while checking the configuration: " + e, e, false);
        }
    }

    /** Whether the ACL lets this client create and delete children, by world or by its digest identity. */
    private static boolean mayLock(List<ACL> acl, Settings s) {
        int needed = ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE;
        @Nullable String mine = s.user == null ? null : digestId(s.user, s.password);
        int granted = 0;
        for (ACL entry : acl) {
            Id id = entry.getId();
            boolean matches = ("world".equals(id.getScheme()) && "anyone".equals(id.getId()))
                    || ("digest".equals(id.getScheme()) && id.getId().equals(mine));
            if (matches) {
                granted |= entry.getPerms();
            }
        }
        return (granted & needed) == needed;
    }

    private static LockConfigurationException credentialsRefused(Settings s, List<ACL> acl) {
        Set<String> users = new TreeSet<>();
        for (ACL entry : acl) {
            if ("digest".equals(entry.getId().getScheme())) {
                String id = entry.getId().getId();
                users.add(id.substring(0, Math.max(0, id.indexOf(':'))));
            }
        }
        String who = s.user == null ? "no credentials" : "the digest credentials of user '" + s.user + "'";
        return new LockConfigurationException("ZooKeeper at " + s.where() + " does not let " + who
                + " create and delete nodes under basePath " + s.basePath
                + (users.isEmpty() ? "" : " (its ACL names digest users " + users + ")")
                + ": check the user and password in the URI, or the acl setting");
    }

    private static String digestId(String user, String password) {
        try {
            return DigestAuthenticationProvider.generateDigest(user + ":" + password);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is not available for ZooKeeper digest identities", e);
        }
    }

    /** The parsed settings; {@link #toString()} and {@link #where()} never show the password. */
    private static final class Settings {
        String hosts = "";
        String chroot = "";

        @Nullable
        String user;

        String password = "";
        /** Whether a password was given at all (the URI's user info or the setting), even an empty one. */
        boolean passwordGiven;

        Duration sessionTimeout = Duration.ofSeconds(30);
        Duration connectionTimeout = Duration.ofSeconds(5);
        String basePath = ZooKeeperLockProvider.DEFAULT_BASE_PATH;
        List<ACL> acl = ZooDefs.Ids.OPEN_ACL_UNSAFE;

        String where() {
            return hosts + chroot;
        }

        @Override
        public String toString() {
            return "zookeeper://" + (user == null ? "" : user + ":***@") + where();
        }

        static Settings of(LockConfig config) {
            Settings s = new Settings();
            URI uri = config.uri();
            List<String> unknown = new ArrayList<>();
            for (String key : config.properties().keySet()) {
                if (!KNOWN.contains(key)) {
                    unknown.add(key);
                }
            }
            if (!unknown.isEmpty()) {
                throw new LockConfigurationException(
                        "unknown setting(s) " + unknown + " for zookeeper://; known settings: " + new TreeSet<>(KNOWN));
            }
            String authority = uri.getRawAuthority();
            if (authority == null || authority.isBlank()) {
                throw new LockConfigurationException("hosts are missing in " + LockConfig.redacted(uri)
                        + "; expected zookeeper://host:2181[,host:2181...][/chroot]");
            }
            int at = authority.lastIndexOf('@');
            String hostPart = at < 0 ? authority : authority.substring(at + 1);
            if (at >= 0) {
                String info = authority.substring(0, at);
                int colon = info.indexOf(':');
                s.user = decode(colon < 0 ? info : info.substring(0, colon));
                s.password = colon < 0 ? "" : decode(info.substring(colon + 1));
                s.passwordGiven = colon >= 0;
            }
            s.hosts = hosts(hostPart);
            String path = uri.getRawPath();
            if (path != null && !path.isEmpty() && !path.equals("/")) {
                String chroot = decode(path.endsWith("/") ? path.substring(0, path.length() - 1) : path);
                try {
                    ZooKeeperLockProvider.Builder.requireValidBasePath(chroot);
                } catch (IllegalArgumentException e) {
                    throw new LockConfigurationException(
                            "chroot must be a znode path such as /app, was '" + chroot + "'");
                }
                s.chroot = chroot;
            }
            config.property("user").ifPresent(u -> s.user = u);
            config.property("password").ifPresent(p -> {
                s.password = p;
                s.passwordGiven = true;
            });
            if (s.user != null && s.user.isEmpty()) {
                s.user = null;
            }
            if ((s.user == null) == s.passwordGiven) {
                // A password alone would be ignored and the nodes created with open ACLs; a user alone
                // would authenticate with an empty password nobody meant.
                throw new LockConfigurationException("ZooKeeper digest authentication needs both a user and a"
                        + " password; "
                        + (s.user == null ? "the password has no user" : "user '" + s.user + "' has no password")
                        + " in " + LockConfig.redacted(uri));
            }
            s.sessionTimeout = config.durationProperty("sessionTimeout", s.sessionTimeout);
            if (s.sessionTimeout.compareTo(Duration.ofMillis(100)) < 0
                    || s.sessionTimeout.compareTo(Duration.ofHours(1)) > 0) {
                throw new LockConfigurationException(
                        "sessionTimeout must be between 100 ms and 1 hour, was " + s.sessionTimeout);
            }
            s.connectionTimeout = config.durationProperty("connectionTimeout", s.connectionTimeout);
            if (s.connectionTimeout.compareTo(Duration.ofMillis(10)) < 0
                    || s.connectionTimeout.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new LockConfigurationException(
                        "connectionTimeout must be between 10 ms and 10 minutes, was " + s.connectionTimeout);
            }
            try {
                s.basePath = ZooKeeperLockProvider.Builder.requireValidBasePath(
                        config.property("basePath").orElse(s.basePath));
            } catch (IllegalArgumentException e) {
                throw new LockConfigurationException(e.getMessage(), e);
            }
            String acl = config.property("acl").orElse(s.user == null ? "open" : "creator");
            s.acl = switch (acl) {
                case "open" -> ZooDefs.Ids.OPEN_ACL_UNSAFE;
                case "creator", "creator-read" -> {
                    if (s.user == null) {
                        throw new LockConfigurationException(
                                "acl=" + acl + " needs credentials (zookeeper://user:password@host...)");
                    }
                    List<ACL> list = new ArrayList<>(
                            List.of(new ACL(ZooDefs.Perms.ALL, new Id("digest", digestId(s.user, s.password)))));
                    if (acl.equals("creator-read")) {
                        list.addAll(ZooDefs.Ids.READ_ACL_UNSAFE);
                    }
                    yield List.copyOf(list);
                }
                default ->
                    throw new LockConfigurationException(
                            "acl must be open, creator or creator-read, was '" + acl + "'");
            };
            return s;
        }

        private static String hosts(String raw) {
            List<String> out = new ArrayList<>();
            for (String host : raw.split(",", -1)) {
                String h = host.strip();
                if (h.isEmpty()) {
                    throw new LockConfigurationException(
                            "hosts must be host[:port] separated by commas, was '" + raw + "'");
                }
                int colon = h.lastIndexOf(':');
                if (colon > 0 && !h.endsWith("]")) {
                    String port = h.substring(colon + 1);
                    try {
                        int p = Integer.parseInt(port);
                        if (p < 1 || p > 65535) {
                            throw new NumberFormatException();
                        }
                    } catch (NumberFormatException e) {
                        throw new LockConfigurationException(
                                "port must be a number from 1 to 65535, was '" + port + "' in hosts '" + raw + "'");
                    }
                    out.add(h);
                } else {
                    out.add(h + ":2181");
                }
            }
            return String.join(",", out);
        }

        private static String decode(String s) {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        }
    }

    /** The same ACL for every node Curator creates on this provider's behalf (container parents). */
    private static final class FixedAcl implements ACLProvider {
        private final List<ACL> acl;

        FixedAcl(List<ACL> acl) {
            this.acl = acl;
        }

        @Override
        public List<ACL> getDefaultAcl() {
            return acl;
        }

        @Override
        public List<ACL> getAclForPath(String path) {
            return acl;
        }
    }

    /** {@inheritDoc} */
    @Override
    public java.util.List<io.lockstep.spi.ProviderKind> kinds() {
        return java.util.List.of(new io.lockstep.spi.ProviderKind(
                "zookeeper",
                "zookeeper://h1:2181,h2:2181/chroot",
                io.lockstep.zookeeper.internal.ZooKeeperBackend.INFO));
    }
}
