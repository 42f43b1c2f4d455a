package io.lockstep.redlock.internal;

import io.lockstep.LockState;
import io.lockstep.redlock.internal.Replies.Reply;
import io.lockstep.spi.HolderText;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * What the nodes' answers to {@link Scripts#INSPECT} say about one lock, read as Redlock reads a grant:
 * the lock is held when one value (one round of one holder) is on a quorum of nodes, and free when no
 * value can be on a quorum even counting every node that did not answer as holding it. Anything between
 * cannot be told. Pure: no I/O.
 */
final class InspectTally {

    /**
     * One node's answer.
     *
     * @param value the value on the lock key, or null if the key is absent
     * @param pttlMillis the key's PTTL: its time left in ms, -1 without expiry, -2 absent
     * @param counter the node's fence counter, or -1 if it has none
     */
    record NodeView(@Nullable String value, long pttlMillis, long counter) {

        /** Parses a node's reply to {@link Scripts#INSPECT}. */
        static NodeView parse(Node node, Object reply) {
            if (!(reply instanceof List<?> list) || list.size() < 2) {
                throw new IllegalStateException("unexpected reply to the inspect script: " + reply);
            }
            @Nullable String value = text(list.get(0));
            @Nullable String counter = list.size() > 2 ? text(list.get(2)) : null;
            return new NodeView(value, Replies.asLong(list.get(1)), counter == null ? -1 : Long.parseLong(counter));
        }

        private static @Nullable String text(@Nullable Object reply) {
            return reply instanceof byte[] bytes
                    ? new String(bytes, StandardCharsets.UTF_8)
                    : reply instanceof String s ? s : null;
        }
    }

    private InspectTally() {}

    /**
     * The lock's state from {@code replies} (one per node, in node order), or empty when too few nodes
     * answered to tell held from free.
     *
     * <ul>
     *   <li>Held: the fence is the counter of the nodes holding the value (a node's counter moves only
     *       when it grants, and it grants nothing while the key is held, so they all show the holder's
     *       fence); the time left is the quorum-th longest PTTL among them, when the quorum would fall
     *       apart; the holder is the value's text after its first space.
     *   <li>Free: the fence is the highest counter answered, the last fence any node granted (a round
     *       that lost may have pushed a minority of counters above the last holder's).
     * </ul>
     */
    static Optional<LockState> decide(List<Reply<NodeView>> replies, int quorum) {
        Map<String, List<NodeView>> byValue = new LinkedHashMap<>();
        long highestCounter = -1;
        for (Reply<NodeView> reply : replies) {
            NodeView view = reply.value();
            if (view == null) {
                continue;
            }
            highestCounter = Math.max(highestCounter, view.counter());
            if (view.value() != null) {
                byValue.computeIfAbsent(view.value(), v -> new ArrayList<>()).add(view);
            }
        }
        int unknown = Replies.unknown(replies);
        int mostHolding = 0;
        for (Map.Entry<String, List<NodeView>> entry : byValue.entrySet()) {
            List<NodeView> holding = entry.getValue();
            mostHolding = Math.max(mostHolding, holding.size());
            if (holding.size() >= quorum) {
                return Optional.of(held(entry.getKey(), holding, quorum));
            }
        }
        if (mostHolding + unknown >= quorum) {
            return Optional.empty();
        }
        OptionalLong fence = highestCounter >= 0 ? OptionalLong.of(highestCounter) : OptionalLong.empty();
        return Optional.of(new LockState(false, fence, Optional.empty()));
    }

    private static LockState held(String value, List<NodeView> holding, int quorum) {
        long fence = holding.stream().mapToLong(NodeView::counter).min().orElse(-1);
        List<Long> ttls = holding.stream()
                .map(NodeView::pttlMillis)
                .filter(ttl -> ttl >= 0)
                .sorted(Comparator.reverseOrder())
                .toList();
        Optional<Duration> remaining =
                ttls.size() >= quorum ? Optional.of(Duration.ofMillis(ttls.get(quorum - 1))) : Optional.empty();
        int space = value.indexOf(' ');
        return new LockState(
                true,
                fence >= 0 ? OptionalLong.of(fence) : OptionalLong.empty(),
                remaining,
                space < 0 ? Optional.empty() : HolderText.decode(value.substring(space + 1)));
    }
}
