package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.LockProvider;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.context.properties.ConfigurationPropertiesReportEndpoint;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

@ExtendWith(OutputCaptureExtension.class)
class SecretsTest {

    @Test
    @DisplayName("/actuator/configprops shows Lockstep URIs without their passwords, even set to show values")
    void configpropsMasksPasswords(CapturedOutput output) {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2(), "lockstep.providers.orders.uri=" + Starter.h2())
                .run(context -> {
                    ConfigurationPropertiesReportEndpoint endpoint = new ConfigurationPropertiesReportEndpoint(
                            context.getBeanProvider(SanitizingFunction.class)
                                    .orderedStream()
                                    .toList(),
                            Show.ALWAYS);
                    endpoint.setApplicationContext(context);
                    String report =
                            endpoint.configurationPropertiesWithPrefix("lockstep").getContexts().values().stream()
                                    .flatMap(c -> c.getBeans().values().stream())
                                    .map(b -> b.getProperties() + " " + b.getInputs())
                                    .toList()
                                    .toString();
                    assertThat(report).contains("jdbc:h2:mem:").contains("?...").doesNotContain(Starter.SECRET);
                    assertThat(context.getBean(LockProvider.class).toString()).doesNotContain(Starter.SECRET);
                });
        assertThat(output.getAll()).contains("Lockstep provider 'default' open").doesNotContain(Starter.SECRET);
    }

    @Test
    @DisplayName("the sanitizer leaves other properties alone, and is not there without Actuator")
    void sanitizerScope() {
        SanitizingFunction sanitizer = new LockstepActuatorAutoConfiguration.LockstepUriSanitizer();
        assertThat(sanitizer
                        .apply(new org.springframework.boot.actuate.endpoint.SanitizableData(
                                null, "spring.datasource.url", "jdbc:h2:mem:x?password=p"))
                        .getValue())
                .isEqualTo("jdbc:h2:mem:x?password=p");
        assertThat(sanitizer
                        .apply(new org.springframework.boot.actuate.endpoint.SanitizableData(
                                null, "LOCKSTEP_PROVIDERS_ORDERS_URI", "redis://u:p@h:1"))
                        .getValue())
                .isEqualTo("redis://u:***@h:1");
        Starter.runner()
                .withClassLoader(new FilteredClassLoader(SanitizingFunction.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("lockstepUriSanitizer"));
    }
}
