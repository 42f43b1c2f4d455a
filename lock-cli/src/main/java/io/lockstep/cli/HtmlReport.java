package io.lockstep.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * One self-contained HTML file that answers "which backend, and why": a verdict per backend and per fault, the
 * table, a holder timeline per backend (faults as bands, failed and timed-out acquires drawn, red only for
 * holds with a checker violation), the acquire-latency CDF normalised per backend and the recovery times on a
 * log axis, drawn by Chart.js, which is inlined from its WebJar (the page needs no network). Once the charts
 * are drawn, the page puts each chart's id and element count in the body's {@code data-rendered} attribute;
 * a script error is shown on the page and put in {@code data-errors}.
 */
final class HtmlReport {
    private HtmlReport() {}

    /** Where the WebJar keeps Chart.js; the version is the dependency's. */
    static final String CHART_JS = "META-INF/resources/webjars/chart.js/" + chartJsVersion() + "/dist/chart.umd.js";

    /** The report of one run. */
    static String render(CompareReport report, ObjectMapper mapper) {
        return render(report, null, mapper);
    }

    /**
     * The report of one run; with {@code comparison} (the text {@link RunDiff} printed), a section comparing
     * it with a baseline run.
     */
    static String render(CompareReport report, @Nullable String comparison, ObjectMapper mapper) {
        String template = resource("io/lockstep/cli/report.html");
        String data;
        try {
            data = mapper.writeValueAsString(report);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("could not serialize the report", e);
        }
        String compare = comparison == null
                ? ""
                : "<h2>Compared with the baseline run</h2>\n<pre class=\"table\" id=\"comparison\">"
                        + escapeHtml(comparison) + "</pre>";
        return template.replace("/*COMPARE*/", compare)
                .replace("/*TABLE*/", escapeHtml(Table.render(report)))
                .replace("/*CHARTJS*/", scriptSafe(resource(CHART_JS)))
                .replace("/*DATA*/", scriptSafe(data));
    }

    private static String chartJsVersion() {
        String props = resource("META-INF/maven/org.webjars.npm/chart.js/pom.properties");
        return props.lines()
                .filter(l -> l.startsWith("version="))
                .map(l -> l.substring("version=".length()).strip())
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("the Chart.js WebJar has no version"));
    }

    /** Text inside a script element must not close it. */
    private static String scriptSafe(String js) {
        return js.replace("</", "<\\/");
    }

    private static String escapeHtml(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    private static String resource(String path) {
        try (InputStream in = HtmlReport.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException(path + " is not on the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
