package io.lockstep.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockstep.Holder;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.Locks;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code lockctl inspect NAME --uri U}: whether the lock is held, the fence, the TTL left and the holder (host,
 * pid, label), where the backend tells. The exit code says it: 0 free, 4 held, 5 the backend cannot tell.
 */
@Command(
        name = "inspect",
        mixinStandardHelpOptions = true,
        description = {
            "Shows whether a lock is held, its fence, its remaining TTL and its holder (host, pid and the label given",
            "with acquire/run --label), where the backend can tell.",
            "Exits 0 if the lock is free, 4 if it is held, 5 if the backend cannot tell."
        })
final class InspectCommand implements Callable<Integer> {

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "the lock's name")
    String name;

    @Option(names = "--uri", required = true, description = "the backend, e.g. redis://localhost:6379")
    String uri;

    @Option(
            names = "--json",
            description = "print one JSON object: lock, backend, held (true, false or null), fence, remainingMs,"
                    + " holder ({host, pid, label} or null)")
    boolean json;

    @Override
    public Integer call() throws JsonProcessingException {
        PrintWriter out = spec.commandLine().getOut();
        try (LockProvider provider = Locks.open(uri)) {
            Optional<LockState> state = provider.inspect(name);
            if (json) {
                Map<String, Object> o = new LinkedHashMap<>();
                o.put("lock", name);
                o.put("backend", provider.info().name());
                o.put("held", state.map(LockState::held).orElse(null));
                o.put(
                        "fence",
                        state.filter(s -> s.fencingToken().isPresent())
                                .map(s -> s.fencingToken().getAsLong())
                                .orElse(null));
                o.put(
                        "remainingMs",
                        state.flatMap(LockState::remaining)
                                .map(d -> d.toMillis())
                                .orElse(null));
                o.put(
                        "holder",
                        state.flatMap(LockState::holder)
                                .map(InspectCommand::json)
                                .orElse(null));
                out.println(new ObjectMapper().writeValueAsString(o));
            }
            if (state.isEmpty()) {
                if (!json) {
                    out.println("'" + name + "': " + provider.info().name() + " cannot tell who holds a lock");
                }
                return LockCtl.CANNOT_TELL;
            }
            LockState s = state.get();
            String fence = s.fencingToken().isPresent()
                    ? Long.toString(s.fencingToken().getAsLong())
                    : "none";
            if (!json) {
                if (s.held()) {
                    out.println("'" + name + "': held, fence " + fence + ", remaining TTL "
                            + s.remaining().map(d -> d.toMillis() + " ms").orElse("unknown") + ", holder "
                            + s.holder().map(InspectCommand::text).orElse("unknown"));
                } else {
                    out.println("'" + name + "': free" + (s.fencingToken().isPresent() ? ", last fence " + fence : ""));
                }
            }
            return s.held() ? LockCtl.HELD : LockCtl.OK;
        }
    }

    /** {@code host web-3 pid 4242 label nightly}: every field is printable ASCII without spaces. */
    private static String text(Holder h) {
        return "host " + h.host() + " pid " + h.pid()
                + h.label().map(l -> " label " + l).orElse("");
    }

    private static Map<String, Object> json(Holder h) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("host", h.host());
        o.put("pid", h.pid());
        o.put("label", h.label().orElse(null));
        return o;
    }
}
