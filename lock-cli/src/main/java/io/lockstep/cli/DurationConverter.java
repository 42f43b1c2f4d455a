package io.lockstep.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** Reads {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h} or ISO-8601 ({@code PT30S}); rejects the rest. */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

    private static final Pattern SIMPLE = Pattern.compile("(\\d{1,9})(ms|s|m|h)");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    static Duration parse(String value) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        Matcher m = SIMPLE.matcher(v);
        Duration d;
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            d = switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                default -> Duration.ofHours(n);
            };
        } else if (v.startsWith("pt") || v.startsWith("p")) {
            try {
                d = Duration.parse(value.strip());
            } catch (DateTimeParseException e) {
                throw bad(value);
            }
        } else {
            throw bad(value);
        }
        if (d.isNegative() || d.isZero()) {
            throw new CommandLine.TypeConversionException("'" + value + "' must be a positive duration");
        }
        return d;
    }

    private static CommandLine.TypeConversionException bad(String value) {
        return new CommandLine.TypeConversionException(
                "'" + value + "' is not a duration (examples: 500ms, 30s, 2m, 1h, PT1M)");
    }
}
