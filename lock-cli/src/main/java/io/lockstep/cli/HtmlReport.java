package io.lockstep.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * One self-contained HTML file: the table, a holder timeline per backend with the faults marked and
 * overlapping holds in red, acquire-latency histograms and recovery times, drawn by Chart.js, which is
 * inlined from its WebJar (the page needs no network). After drawing, the page writes each chart's id
 * and element count into {@code #status}; script errors go to {@code #errors}.
 */
final class HtmlReport {
    private HtmlReport() {}

    /** Where the WebJar keeps Chart.js; the version is the dependency's. */
    static final String CHART_JS = "META-INF/resources/webjars/chart.js/" + chartJsVersion() + "/dist/chart.umd.js";

    static String render(CompareReport report, ObjectMapper mapper) {
        String template = resource("io/lockstep/cli/report.html");
        String data;
        try {
            data = mapper.writeValueAsString(report);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("could not serialize the report", e);
        }
        return template.replace("/*TABLE*/", escapeHtml(Table.render(report)))
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
