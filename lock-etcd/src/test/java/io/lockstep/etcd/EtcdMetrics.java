package io.lockstep.etcd;

import io.lockstep.tck.servers.EtcdServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What an etcd member counts about itself, read from its {@code /metrics} (Prometheus text). */
final class EtcdMetrics {

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private EtcdMetrics() {}

    /** The member's whole {@code /metrics} text. */
    static String scrape(EtcdServer etcd) throws IOException, InterruptedException {
        return HTTP.send(
                        HttpRequest.newBuilder(URI.create(etcd.endpoint() + "/metrics"))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    /** The sum of the samples of {@code metric} whose labels match {@code labels} (a regex; "" for none). */
    static long sum(EtcdServer etcd, String metric, String labels) throws IOException, InterruptedException {
        Pattern sample = Pattern.compile(
                "^" + Pattern.quote(metric) + (labels.isEmpty() ? "" : "\\{[^}]*" + labels + "[^}]*\\}")
                        + " ([0-9.e+]+)$",
                Pattern.MULTILINE);
        Matcher m = sample.matcher(scrape(etcd));
        long total = 0;
        boolean found = false;
        while (m.find()) {
            total += (long) Double.parseDouble(m.group(1));
            found = true;
        }
        if (!found) {
            throw new AssertionError("etcd at " + etcd.endpoint() + " reports no " + metric + " " + labels);
        }
        return total;
    }
}
