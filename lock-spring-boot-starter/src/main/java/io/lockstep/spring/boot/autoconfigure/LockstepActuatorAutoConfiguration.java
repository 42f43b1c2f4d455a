package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.LockConfig;
import java.util.Locale;
import java.util.regex.Pattern;
import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Keeps the secrets of Lockstep URIs out of {@code /actuator/configprops} and {@code /actuator/env}, even
 * when they are set to show values: {@code lockstep.uri} and {@code lockstep.providers.*.uri} are shown
 * without user info past the user name and without query (see {@link LockConfig#redacted(String)}).
 */
@AutoConfiguration
@ConditionalOnClass(SanitizingFunction.class)
public final class LockstepActuatorAutoConfiguration {

    private static final Pattern URI_KEY =
            Pattern.compile("lockstep[._](uri|providers[._][^._]+[._]uri)", Pattern.CASE_INSENSITIVE);

    @Bean
    SanitizingFunction lockstepUriSanitizer() {
        return new LockstepUriSanitizer();
    }

    /** Redacts a Lockstep URI; leaves every other value alone. */
    static final class LockstepUriSanitizer implements SanitizingFunction {
        @Override
        public SanitizableData apply(SanitizableData data) {
            Object value = data.getValue();
            if (value == null
                    || !URI_KEY.matcher(data.getKey().toLowerCase(Locale.ROOT)).matches()) {
                return data;
            }
            return data.withValue(LockConfig.redacted(value.toString()));
        }
    }
}
