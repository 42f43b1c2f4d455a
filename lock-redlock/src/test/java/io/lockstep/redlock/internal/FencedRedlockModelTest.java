package io.lockstep.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * A model of fenced Redlock: N simulated nodes that run the acquire script's rule, clients that run the
 * backend's round decision ({@link AcquireTally}), and a network that delivers, reorders and loses
 * messages. QuickTheories drives random interleavings, key expiries, node crashes and client give-ups,
 * shrinks a failing run and prints the seed that reproduces it ({@code -DQT_SEED=...}).
 *
 * <p>Checked: no two successful acquisitions get the same fence, and an acquisition whose round began
 * after another one succeeded gets a greater fence, as long as at most {@code 2Q − N − 1} nodes lose
 * their state (with the majority quorum: none). A node that crashes keeping its state (persistence) is
 * always allowed. The same property must fail when a rule is broken on purpose: nodes that also grant a
 * proposal equal to their counter, or more state losses than the quorum tolerates.
 */
class FencedRedlockModelTest {

    /**
     * One run's shape: nodes, quorum above the majority, clients, state losses allowed, and the schedule.
     * Each schedule entry picks an action (its value mod 20) and what it acts on (the rest).
     */
    record Run(int nodes, int extraQuorum, int clients, int stateLosses, List<Integer> schedule) {
        int quorum() {
            return Math.min(nodes, nodes / 2 + 1 + extraQuorum);
        }

        /** The state losses the quorum tolerates: any two quorums still share a node that kept its state. */
        int tolerated() {
            return Math.max(0, 2 * quorum() - nodes - 1);
        }

        @Override
        public String toString() {
            return "Run[N=" + nodes + ", Q=" + quorum() + ", clients=" + clients + ", stateLosses=" + stateLosses
                    + ", schedule(" + schedule.size() + ")=" + schedule + "]";
        }
    }

    /** Uniform choices, 100 to 2000 of them. */
    static Gen<List<Integer>> schedules() {
        return lists().of(Generate.range(0, 1_000_000)).ofSizeBetween(100, 2000);
    }

    static Gen<Run> runs() {
        return Generate.range(1, 7)
                .zip(Generate.range(0, 1), Generate.range(2, 4), Generate.range(0, 3), schedules(), Run::new);
    }

    @Test
    @DisplayName("fences never repeat or go backwards across successful holders (1000 runs)")
    void fencesIncreaseAcrossHolders() {
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger withPairs = new AtomicInteger();
        qt().withExamples(1000).forAll(runs()).checkAssert(run -> {
            Simulation sim = new Simulation(
                    run.nodes(), run.quorum(), run.clients(), Math.min(run.stateLosses(), run.tolerated()));
            sim.run(run.schedule());
            runs.incrementAndGet();
            if (sim.successes.size() >= 2) {
                withPairs.incrementAndGet();
            }
            sim.assertFencesIncrease();
        });
        // Pairs of holders are what the property is about: most runs must have some.
        assertThat(withPairs.get() * 100 / runs.get())
                .as("percentage of runs with two or more successful holders (%d of %d)", withPairs.get(), runs.get())
                .isGreaterThanOrEqualTo(25);
    }

    @Test
    @DisplayName(
            "the property fails when nodes also grant a proposal equal to their counter (f < counter for f ≤ counter)")
    void offByOneNodeRuleIsCaught() {
        assertThatThrownBy(() -> qt().withExamples(1000).forAll(runs()).checkAssert(run -> {
                    Simulation sim = new Simulation(
                            run.nodes(),
                            run.quorum(),
                            run.clients(),
                            Math.min(run.stateLosses(), run.tolerated()),
                            () -> new NodeState(false));
                    sim.run(run.schedule());
                    sim.assertFencesIncrease();
                }))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Property falsified")
                .hasMessageContaining("Seed was")
                .hasMessageMatching("(?s).*(fences of|began after).*"); // the fence rule, not a crash
    }

    @Test
    @DisplayName("the property fails when more nodes lose their state than 2Q − N − 1")
    void untoleratedStateLossIsCaught() {
        assertThatThrownBy(() -> qt().withExamples(1000).forAll(runs()).checkAssert(run -> {
                    Simulation sim = new Simulation(run.nodes(), run.quorum(), run.clients(), run.stateLosses() + 1);
                    sim.run(run.schedule());
                    sim.assertFencesIncrease();
                }))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Property falsified")
                .hasMessageContaining("Seed was")
                .hasMessageMatching("(?s).*(fences of|began after).*"); // the fence rule, not a crash
    }

    @Test
    @DisplayName("with no faults but reordering, every client eventually can acquire and fences increase (200 runs)")
    void withoutLossEveryoneGetsATurn() {
        qt().withExamples(200).forAll(Generate.range(1, 5), schedules()).checkAssert((nodes, schedule) -> {
            Simulation sim = new Simulation(nodes, nodes / 2 + 1, 2, 0);
            sim.lossless = true;
            sim.run(schedule);
            sim.assertFencesIncrease();
            // Drain: every pending message delivered, then each client in turn acquires and releases alone.
            sim.drain();
            for (int c = 0; c < 2; c++) {
                sim.soloAcquire(c);
            }
            assertThat(sim.successes).hasSizeGreaterThanOrEqualTo(2);
            sim.assertFencesIncrease();
        });
    }

    @Test
    @DisplayName("a node that restarts without persistence can hand out a fence twice under a bare majority")
    void stateLossUnderMajorityRepeatsAFence() {
        // N=3, Q=2. A wins nodes 0 and 1 with fence 1 (its message to node 2 is lost).
        Simulation sim = new Simulation(3, 2, 2, 1);
        sim.lossless = true;
        Client a = sim.clients.get(0);
        a.startRound(sim);
        sim.deliverWhere(m -> m.client == 0 && m.node != 2 && m.request);
        sim.network.removeIf(m -> m.client == 0 && m.node == 2);
        sim.deliverWhere(m -> m.client == 0 && !m.request);
        a.timeOut(sim);
        assertThat(a.holding).isTrue();
        // Node 1 restarts empty; A's key on node 0 expires (A's lease is over).
        sim.nodes[1] = new NodeState();
        sim.nodes[0].holder = null;
        // B proposes 1: node 0 says stale, nodes 1 and 2 grant: a quorum, fence 1 again.
        Client b = sim.clients.get(1);
        b.startRound(sim);
        sim.deliverWhere(m -> m.client == 1);
        sim.deliverWhere(m -> m.client == 1);
        assertThat(b.holding).isTrue();
        assertThat(sim.successes.get(1).fence).isEqualTo(sim.successes.get(0).fence);
    }

    @Test
    @DisplayName("the same loss under a quorum of N (2Q − N − 1 = 1 tolerated loss at N=3) keeps fences increasing")
    void largerQuorumToleratesTheLoss() {
        Simulation sim = new Simulation(3, 3, 2, 1);
        sim.lossless = true;
        Client a = sim.clients.get(0);
        a.startRound(sim);
        sim.deliverWhere(m -> m.client == 0);
        sim.deliverWhere(m -> m.client == 0);
        assertThat(a.holding).isTrue();
        sim.nodes[1] = new NodeState();
        sim.nodes[0].holder = null;
        sim.nodes[2].holder = null;
        Client b = sim.clients.get(1);
        for (int i = 0; i < 4 && !b.holding; i++) {
            if (!b.inRound) {
                b.startRound(sim);
            }
            sim.deliverWhere(m -> m.client == 1);
        }
        assertThat(b.holding).isTrue();
        assertThat(sim.successes.get(1).fence).isGreaterThan(sim.successes.get(0).fence);
    }

    // ---------------------------------------------------------------------------------------------

    static final class NodeState {
        /** False breaks the rule on purpose: the node also grants a proposal equal to its counter. */
        final boolean rejectsStale;

        @Nullable
        String holder;

        long counter;

        NodeState() {
            this(true);
        }

        NodeState(boolean rejectsStale) {
            this.rejectsStale = rejectsStale;
        }

        /** The acquire script's rule, as {@link Scripts#ACQUIRE} runs it. */
        AcquireReply acquire(String value, long proposal) {
            if (holder != null) {
                return AcquireReply.held(counter, 100, holder);
            }
            if (rejectsStale ? proposal <= counter : proposal < counter) {
                return AcquireReply.stale(counter);
            }
            long before = counter;
            holder = value;
            counter = Math.max(counter, proposal);
            return AcquireReply.granted(before);
        }

        void release(String value) {
            if (value.equals(holder)) {
                holder = null;
            }
        }
    }

    static final class Message {
        final boolean request;
        final boolean release;
        final int client;
        final int node;
        final long round;
        final String value;
        final long proposal;
        final @Nullable AcquireReply reply;

        Message(
                boolean request,
                boolean release,
                int client,
                int node,
                long round,
                String value,
                long proposal,
                @Nullable AcquireReply reply) {
            this.request = request;
            this.release = release;
            this.client = client;
            this.node = node;
            this.round = round;
            this.value = value;
            this.proposal = proposal;
            this.reply = reply;
        }
    }

    record Success(int client, long fence, long roundStartedAt, long decidedAt) {}

    static final class Client {
        final int id;
        long hint;
        long round;
        boolean inRound;
        boolean holding;
        String value = "";
        String heldValue = "";
        long proposal;
        long roundStartedAt;

        @Nullable
        AcquireReply[] replies = new AcquireReply[0];

        Client(int id) {
            this.id = id;
        }

        void startRound(Simulation sim) {
            startRound(sim, hint + 1);
        }

        void startRound(Simulation sim, long proposal) {
            round++;
            inRound = true;
            this.proposal = proposal;
            value = "c" + id + ":" + round;
            roundStartedAt = sim.step;
            replies = new AcquireReply[sim.nodes.length];
            for (int n = 0; n < sim.nodes.length; n++) {
                sim.network.add(new Message(true, false, id, n, round, value, proposal, null));
            }
        }

        void receive(Simulation sim, Message m) {
            if (!inRound || m.round != round || m.reply == null) {
                return; // a late reply to an earlier round
            }
            replies[m.node] = m.reply;
            if (Arrays.stream(replies).allMatch(r -> r != null)) {
                decide(sim);
            }
        }

        void timeOut(Simulation sim) {
            if (inRound) {
                decide(sim);
            }
        }

        private void decide(Simulation sim) {
            inRound = false;
            AcquireTally tally = AcquireTally.decide(Arrays.asList(replies), sim.quorum, proposal);
            hint = Math.max(hint, tally.maxCounter());
            if (tally.outcome() == AcquireTally.Outcome.GRANTED) {
                holding = true;
                heldValue = value;
                sim.successes.add(new Success(id, proposal, roundStartedAt, sim.step));
                return;
            }
            for (int n = 0; n < replies.length; n++) {
                AcquireReply r = replies[n];
                if (r == null || r.kind() == AcquireReply.Kind.GRANTED) {
                    sim.network.add(new Message(true, true, id, n, round, value, 0, null));
                }
            }
            if (tally.outcome() == AcquireTally.Outcome.STALE) {
                startRound(sim, tally.maxCounter() + 1);
            }
        }

        void release(Simulation sim) {
            holding = false;
            for (int n = 0; n < sim.nodes.length; n++) {
                sim.network.add(new Message(true, true, id, n, round, heldValue, 0, null));
            }
        }
    }

    static final class Simulation {
        final Supplier<NodeState> newNode;
        final NodeState[] nodes;
        final int quorum;
        final List<Client> clients = new ArrayList<>();
        final List<Message> network = new ArrayList<>();
        final List<Success> successes = new ArrayList<>();
        int stateLossesLeft;
        boolean lossless;
        long step;

        Simulation(int nodes, int quorum, int clients, int stateLosses) {
            this(nodes, quorum, clients, stateLosses, NodeState::new);
        }

        Simulation(int nodes, int quorum, int clients, int stateLosses, Supplier<NodeState> newNode) {
            this.newNode = newNode;
            this.nodes = new NodeState[nodes];
            for (int i = 0; i < nodes; i++) {
                this.nodes[i] = newNode.get();
            }
            this.quorum = quorum;
            for (int c = 0; c < clients; c++) {
                this.clients.add(new Client(c));
            }
            this.stateLossesLeft = stateLosses;
        }

        void run(List<Integer> schedule) {
            for (int choice : schedule) {
                step++;
                int action = choice % 20;
                int arg = choice / 20;
                if (action < 12) {
                    if (!network.isEmpty()) {
                        deliver(network.remove(arg % network.size())); // any pending message: reordering
                    }
                } else if (action == 12) {
                    if (!network.isEmpty() && !lossless) {
                        network.remove(arg % network.size()); // message loss
                    }
                } else if (action < 16) {
                    Client c = clients.get(arg % clients.size());
                    if (c.holding) {
                        c.release(this);
                    } else if (!c.inRound) {
                        c.startRound(this);
                    }
                } else if (action == 16) {
                    clients.get(arg % clients.size()).timeOut(this); // gives up on unanswered nodes
                } else if (action < 19) {
                    nodes[arg % nodes.length].holder = null; // a key's TTL passes
                } else {
                    crash(arg);
                }
            }
        }

        private void crash(int arg) {
            if (lossless) {
                return;
            }
            int n = arg % nodes.length;
            network.removeIf(m -> m.node == n); // connections break: in-flight messages are lost
            if (stateLossesLeft > 0 && (arg / nodes.length) % 2 == 0) {
                stateLossesLeft--;
                nodes[n] = newNode.get(); // restart without persistence
            }
        }

        void deliver(Message m) {
            if (m.request) {
                NodeState node = nodes[m.node];
                if (m.release) {
                    node.release(m.value);
                } else {
                    AcquireReply reply = node.acquire(m.value, m.proposal);
                    network.add(new Message(false, false, m.client, m.node, m.round, m.value, m.proposal, reply));
                }
            } else {
                clients.get(m.client).receive(this, m);
            }
        }

        void deliverWhere(java.util.function.Predicate<Message> which) {
            List<Message> chosen = network.stream().filter(which).toList();
            network.removeAll(chosen);
            chosen.forEach(this::deliver);
        }

        void drain() {
            while (!network.isEmpty()) {
                step++;
                deliver(network.remove(0));
            }
            for (Client c : clients) {
                c.timeOut(this);
                while (!network.isEmpty()) {
                    deliver(network.remove(0));
                }
                if (c.holding) {
                    c.release(this);
                }
                while (!network.isEmpty()) {
                    deliver(network.remove(0));
                }
            }
            for (NodeState node : nodes) {
                node.holder = null; // every leftover key's TTL passes
            }
        }

        void soloAcquire(int id) {
            Client c = clients.get(id);
            for (int attempt = 0; attempt < 10 && !c.holding; attempt++) {
                step++;
                if (!c.inRound) {
                    c.startRound(this);
                }
                while (!network.isEmpty()) {
                    deliver(network.remove(0));
                }
            }
            assertThat(c.holding).as("client %d acquires alone", id).isTrue();
            c.release(this);
            while (!network.isEmpty()) {
                deliver(network.remove(0));
            }
        }

        void assertFencesIncrease() {
            for (int i = 0; i < successes.size(); i++) {
                for (int j = 0; j < successes.size(); j++) {
                    if (i == j) {
                        continue;
                    }
                    Success a = successes.get(i);
                    Success b = successes.get(j);
                    assertThat(a.fence()).as("fences of %s and %s", a, b).isNotEqualTo(b.fence());
                    if (a.decidedAt() < b.roundStartedAt()) {
                        assertThat(b.fence())
                                .as("%s began after %s succeeded", b, a)
                                .isGreaterThan(a.fence());
                    }
                }
            }
        }
    }
}
