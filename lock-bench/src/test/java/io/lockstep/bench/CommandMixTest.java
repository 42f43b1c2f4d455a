package io.lockstep.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class CommandMixTest {

    private static final Map<String, Double> EXPECTED = Map.of("evalsha", 2.0, "get", 1.0);

    @Test
    @DisplayName("INFO commandstats lines become calls per command, subcommands included")
    void parsesCommandstats() {
        String info =
                """
                # Commandstats\r
                cmdstat_evalsha:calls=2000,usec=5000,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r
                cmdstat_client|setinfo:calls=4,usec=3,usec_per_call=0.75,rejected_calls=0,failed_calls=0\r
                """;
        assertThat(CommandMix.parse(info))
                .containsExactlyInAnyOrderEntriesOf(Map.of("evalsha", 2000L, "client|setinfo", 4L));
    }

    @Test
    @DisplayName("the expected mix on every node passes, and connection set-up below the noise is left out")
    void expectedMixPasses() {
        Map<String, Double> node = Map.of("evalsha", 2.0, "get", 1.0, "client|setinfo", 0.0001);
        assertThat(CommandMix.check("b", EXPECTED, List.of(node, node)))
                .isEqualTo("on each of 2 nodes: evalsha 2.00, get 1.00");
    }

    @Test
    @DisplayName("a command nobody expects, such as a raw SET instead of a script, fails the trial")
    void unexpectedCommandFails() {
        Map<String, Double> node = Map.of("evalsha", 2.0, "get", 1.0, "set", 1.0);
        assertThatThrownBy(() -> CommandMix.check("b", EXPECTED, List.of(node)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("set 1.00 per operation, not expected at all");
    }

    @Test
    @DisplayName("a node that did not see its share of the scripts fails the trial, naming the node")
    void missingNodeFails() {
        Map<String, Double> full = Map.of("evalsha", 2.0, "get", 1.0);
        Map<String, Double> idle = Map.of("evalsha", 0.5, "get", 0.25);
        assertThatThrownBy(() -> CommandMix.check("b", EXPECTED, List.of(full, idle)))
                .hasMessageContaining("node 2: evalsha 0.50 per operation, expected 2.00")
                .hasMessageContaining("node 2: get 0.25 per operation, expected 1.00");
    }
}
