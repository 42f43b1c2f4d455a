package io.lockstep.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What an etcd member was asked, from its own {@code /metrics}: the gRPC messages it received per
 * method ({@code grpc_server_msg_received_total}; a unary call is one message, each keep-alive on a
 * lease stream one more). The etcd benchmarks read it before and after a trial and divide by the
 * operations they counted, so each figure is printed with the requests it cost.
 */
final class EtcdCounters {

    private static final Pattern RECEIVED =
            Pattern.compile("^grpc_server_msg_received_total\\{([^}]*)\\} ([0-9.e+]+)$", Pattern.MULTILINE);
    private static final Pattern METHOD = Pattern.compile("grpc_method=\"([^\"]+)\"");
    private static final Pattern VERSION = Pattern.compile("etcd_server_version\\{server_version=\"([^\"]+)\"\\}");
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private EtcdCounters() {}

    /** Messages received per gRPC method, from the member at {@code endpoint} ({@code http://host:port}). */
    static Map<String, Long> received(String endpoint) {
        String text = metrics(endpoint);
        Map<String, Long> out = new TreeMap<>();
        Matcher m = RECEIVED.matcher(text);
        while (m.find()) {
            Matcher method = METHOD.matcher(m.group(1));
            if (method.find()) {
                out.merge(method.group(1), (long) Double.parseDouble(m.group(2)), Long::sum);
            }
        }
        if (out.isEmpty()) {
            throw new IllegalStateException("no grpc_server_msg_received_total in " + endpoint + "/metrics");
        }
        return out;
    }

    /** {@code after - before} per method, divided by {@code operations}; methods that did not move are left out. */
    static Map<String, Double> perOperation(Map<String, Long> before, Map<String, Long> after, long operations) {
        if (operations <= 0) {
            throw new IllegalStateException("the benchmark counted no operations; nothing to check");
        }
        Map<String, Double> out = new TreeMap<>();
        after.forEach((method, n) -> {
            long delta = n - before.getOrDefault(method, 0L);
            if (delta > 0) {
                out.put(method, delta / (double) operations);
            }
        });
        return out;
    }

    /**
     * The member's own work so far: log fsyncs (count and seconds) and the process's CPU seconds, for
     * {@link #describeWork}.
     */
    static double[] work(String endpoint) {
        String text = metrics(endpoint);
        return new double[] {
            sample(text, "etcd_disk_wal_fsync_duration_seconds_count"),
            sample(text, "etcd_disk_wal_fsync_duration_seconds_sum"),
            sample(text, "process_cpu_seconds_total")
        };
    }

    /** What the member did per operation between two {@link #work} readings, as one line. */
    static String describeWork(double[] before, double[] after, long operations) {
        double fsyncs = after[0] - before[0];
        return String.format(
                Locale.ROOT,
                "%.2f log fsyncs (mean %.0f µs), %.0f µs of CPU",
                fsyncs / operations,
                fsyncs == 0 ? 0 : (after[1] - before[1]) / fsyncs * 1e6,
                (after[2] - before[2]) / operations * 1e6);
    }

    private static double sample(String text, String name) {
        Matcher m =
                Pattern.compile("^" + name + " ([0-9.e+]+)$", Pattern.MULTILINE).matcher(text);
        if (!m.find()) {
            throw new IllegalStateException("no " + name + " in etcd's /metrics");
        }
        return Double.parseDouble(m.group(1));
    }

    /** {@code "etcd 3.5.x"}, from the member's metrics. */
    static String version(String endpoint) {
        Matcher m = VERSION.matcher(metrics(endpoint));
        return m.find() ? "etcd " + m.group(1) : "etcd (version unknown)";
    }

    private static String metrics(String endpoint) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(endpoint + "/metrics"))
                .timeout(Duration.ofSeconds(5))
                .build();
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            throw new IllegalStateException("could not read " + endpoint + "/metrics", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted reading " + endpoint + "/metrics", e);
        }
    }
}
