package io.lockstep.redlock;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.GroupsRunElsewhere;
import io.lockstep.tck.LockProviderCompatibilityKit;
import io.lockstep.tck.faults.BackendFaults;
import io.lockstep.tck.faults.TcpProxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/**
 * The compatibility kit against Redlock over five nodes that persist every write ({@code appendonly
 * yes}, {@code appendfsync always}) and are declared persistent: a majority killed and restarted keeps
 * its keys and fence counters, so exclusion and fences survive the restart and restarted nodes are not
 * quarantined.
 */
@DisplayName("Redlock over five persistent nodes passes the compatibility kit, fences surviving restarts")
class PersistentRedlockCompatibilityTest extends LockProviderCompatibilityKit {

    private static final List<Integer> MAJORITY = List.of(0, 1, 2);
    private static final List<TcpProxy> proxies = new ArrayList<>();
    private static RedisNodes nodes;

    @BeforeAll
    static void startNodes() {
        nodes = RedisNodes.startPersistent(5);
        for (int i : MAJORITY) {
            proxies.add(TcpProxy.start(nodes.server(i).host(), nodes.port(i)));
        }
    }

    @AfterAll
    static void stopNodes() {
        proxies.forEach(TcpProxy::close);
        proxies.clear();
        if (nodes != null) {
            nodes.close();
        }
    }

    private static String uri() {
        StringBuilder hosts = new StringBuilder();
        for (int i = 0; i < nodes.size(); i++) {
            int port = i < proxies.size() ? proxies.get(i).port() : nodes.port(i);
            hosts.append(i == 0 ? "" : ",").append("127.0.0.1:").append(port);
        }
        return "redlock://" + hosts + "?persistent=true&" + RedlockCompatibilityTest.KIT_NODE_TIMEOUT;
    }

    @Override
    protected LockProvider newProvider() {
        return Locks.open(uri());
    }

    @Override
    protected BackendFaults faults() {
        return new MajorityFaults(nodes, MAJORITY, proxies);
    }

    @Override
    protected Optional<String> childJvmUri() {
        return Optional.of(uri());
    }

    @Override
    protected boolean survivesServerRestart() {
        return true;
    }

    /**
     * The clock group runs in {@link RedlockCompatibilityTest}: persistence changes what a restarted node
     * remembers, not the drift factor, the validity a quorum grant leaves, or whose clock ends a key (each
     * node's, none of which libfaketime can reach).
     */
    @Override
    protected Optional<Class<? extends LockProviderCompatibilityKit>> clockGroupRunsIn() {
        return Optional.of(RedlockCompatibilityTest.class);
    }

    /**
     * The groups without faults run in {@link RedlockCompatibilityTest}: persistence changes what a node
     * remembers across a restart (its keys and fence counters) and whether a restarted node is quarantined,
     * and only the fault groups kill and restart nodes; without a fault the client, the scripts and the
     * quorum rules are the same, over nodes that only write to disk as well.
     */
    @Override
    protected Optional<GroupsRunElsewhere> groupsRunElsewhere() {
        return Optional.of(GroupsRunElsewhere.faultFree(RedlockCompatibilityTest.class));
    }
}
