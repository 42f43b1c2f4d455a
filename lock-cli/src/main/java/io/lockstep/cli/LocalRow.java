package io.lockstep.cli;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.cli.BackendDescriptor.ServerOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * One local row of {@code compare}, as {@code --backend} names it: a backend and its options, e.g. {@code
 * redis?appendfsync=always} or {@code redis-sentinel?waitReplicas=1}. Options of the server lockctl starts
 * ({@link ServerOption}) become server arguments; every other option is a lock-URI setting appended to the
 * row's URI. Both are checked when the row is parsed, before anything starts: server options against their
 * values, lock-URI settings by the backend's own factory on a URI where nothing listens (the factories
 * check their settings before they connect).
 *
 * @param label the row's name in the table and the report: the backend and its options as given
 * @param descriptor the backend
 * @param serverArgs extra arguments for the server(s) lockctl starts
 * @param uriSettings the query appended to the row's URI ({@code k=v&k=v}), empty for none
 */
record LocalRow(String label, BackendDescriptor descriptor, List<String> serverArgs, String uriSettings) {

    LocalRow {
        serverArgs = List.copyOf(serverArgs);
    }

    /** A row without options. */
    static LocalRow of(BackendDescriptor d) {
        return new LocalRow(d.name(), d, List.of(), "");
    }

    /**
     * Splits the values of {@code --backend} into rows. A comma separates rows, except inside a row's
     * options: there it separates rows only when a backend's name follows it ({@code name}, {@code name?...}
     * or {@code name,...}), and otherwise belongs to the option's value. So {@code 'redis?keyPrefix=a,b,etcd'}
     * is two rows, {@code redis?keyPrefix=a,b} and {@code etcd}. A value that itself starts with a backend's
     * name after a comma is written {@code %2C} for that comma (values are percent-decoded), or its row is
     * given in a {@code --backend} of its own.
     */
    static List<String> split(List<String> given, List<BackendDescriptor> catalogue) {
        List<String> rows = new ArrayList<>();
        for (String value : given) {
            @Nullable String current = null;
            for (String piece : value.split(",", -1)) {
                if (current != null && current.contains("?") && !startsWithBackend(piece, catalogue)) {
                    current = current + "," + piece;
                    continue;
                }
                if (current != null) {
                    rows.add(current);
                }
                current = piece;
            }
            if (current != null) {
                rows.add(current);
            }
        }
        return rows;
    }

    private static boolean startsWithBackend(String piece, List<BackendDescriptor> catalogue) {
        String stripped = piece.strip();
        int q = stripped.indexOf('?');
        String name = q < 0 ? stripped : stripped.substring(0, q);
        return catalogue.stream()
                .anyMatch(c -> c.name().equalsIgnoreCase(name) || c.name().equalsIgnoreCase(name + "-3"));
    }

    /**
     * Reads {@code spec} ({@code name} or {@code name?option=value&...}) against {@code catalogue}.
     *
     * @throws IllegalArgumentException naming the option, its value and the rule
     */
    static LocalRow parse(String spec, List<BackendDescriptor> catalogue) {
        String given = spec.strip();
        int q = given.indexOf('?');
        String name = q < 0 ? given : given.substring(0, q);
        String query = q < 0 ? "" : given.substring(q + 1);
        BackendDescriptor d = catalogue.stream()
                .filter(c -> c.name().equalsIgnoreCase(name) || c.name().equalsIgnoreCase(name + "-3"))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("--backend '" + name + "' is unknown; backends: "
                        + catalogue.stream().map(BackendDescriptor::name).collect(Collectors.joining(", "))));
        if (query.isEmpty()) {
            return of(d);
        }
        Map<String, String> options = new LinkedHashMap<>();
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            String value = eq < 0 ? "" : pair.substring(eq + 1);
            if (key.isEmpty()) {
                throw new IllegalArgumentException(
                        "--backend '" + given + "': an option has no name ('" + pair + "'); write name?option=value");
            }
            if (options.put(key, value) != null) {
                throw new IllegalArgumentException("--backend '" + given + "': option '" + key + "' is given twice");
            }
        }
        List<String> serverArgs = new ArrayList<>();
        List<String> uriSettings = new ArrayList<>();
        for (Map.Entry<String, String> o : options.entrySet()) {
            ServerOption server = d.serverOptions().stream()
                    .filter(s -> s.name().equalsIgnoreCase(o.getKey()))
                    .findFirst()
                    .orElse(null);
            if (server == null) {
                uriSettings.add(o.getKey() + "=" + o.getValue());
                continue;
            }
            if (!server.values().contains(o.getValue())) {
                throw new IllegalArgumentException("--backend '" + given + "': " + server.name() + "='"
                        + o.getValue() + "' is not one of " + String.join(", ", server.values()) + " ("
                        + server.rule() + ")");
            }
            serverArgs.addAll(server.args().of(o.getValue()));
        }
        String settings = String.join("&", uriSettings);
        if (!settings.isEmpty()) {
            checkUriSettings(given, d, settings);
        }
        String label = d.name() + "?"
                + options.entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue())
                        .collect(Collectors.joining("&"));
        return new LocalRow(label, d, serverArgs, settings);
    }

    /** The row's URI: the started backend's, with this row's lock-URI settings appended. */
    String uri(String backendUri) {
        if (uriSettings.isEmpty()) {
            return backendUri;
        }
        return backendUri + (backendUri.contains("?") ? "&" : "?") + uriSettings;
    }

    /**
     * Has the backend's factory build a provider from its probe URI with {@code settings}: a bad setting is
     * refused there, naming it; nothing listens at the probe address, so a good one ends unconnected.
     */
    private static void checkUriSettings(String given, BackendDescriptor d, String settings) {
        String serverOptions = d.serverOptions().isEmpty()
                ? "no server options"
                : "server options: "
                        + d.serverOptions().stream().map(ServerOption::name).collect(Collectors.joining(", "));
        if (d.probeUri() == null) {
            throw new IllegalArgumentException("--backend '" + given + "': local " + d.name()
                    + " rows take no lock-URI settings (" + serverOptions + "); give a URI with --uri instead");
        }
        String probe = d.probeUri() + (d.probeUri().contains("?") ? "&" : "?") + settings;
        try {
            LockConfig config = LockConfig.of(probe);
            try (LockProvider ignored = Locks.factoryFor(config).create(config)) {
                // built without connecting: the settings are good
            }
        } catch (LockConfigurationException e) {
            throw new IllegalArgumentException(
                    "--backend '" + given + "': " + e.getMessage() + " (" + serverOptions + ")", e);
        } catch (BackendUnavailableException e) {
            // it tried to connect, so the settings were read and accepted
        } catch (LockException e) {
            throw new IllegalArgumentException("--backend '" + given + "': " + e.getMessage(), e);
        }
    }
}
