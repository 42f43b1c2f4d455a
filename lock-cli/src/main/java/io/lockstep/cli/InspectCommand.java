package io.lockstep.cli;

import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.Locks;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code lockctl inspect NAME --uri U}: whether the lock is held, the fence and the TTL left, where the backend tells. */
@Command(
        name = "inspect",
        mixinStandardHelpOptions = true,
        description = "Shows whether a lock is held, its fence and its remaining TTL, where the backend can tell.")
final class InspectCommand implements Callable<Integer> {

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "the lock's name")
    String name;

    @Option(names = "--uri", required = true, description = "the backend, e.g. redis://localhost:6379")
    String uri;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (LockProvider provider = Locks.open(uri)) {
            Optional<LockState> state = provider.inspect(name);
            if (state.isEmpty()) {
                out.println("'" + name + "': " + provider.info().name() + " cannot tell who holds a lock");
                return LockCtl.OK;
            }
            LockState s = state.get();
            String fence = s.fencingToken().isPresent()
                    ? Long.toString(s.fencingToken().getAsLong())
                    : "none";
            if (s.held()) {
                out.println("'" + name + "': held, fence " + fence + ", remaining TTL "
                        + s.remaining().map(d -> d.toMillis() + " ms").orElse("unknown"));
            } else {
                out.println("'" + name + "': free" + (s.fencingToken().isPresent() ? ", last fence " + fence : ""));
            }
            return LockCtl.OK;
        }
    }
}
