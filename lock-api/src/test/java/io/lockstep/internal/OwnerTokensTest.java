package io.lockstep.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class OwnerTokensTest {

    @Test
    @DisplayName("tokens are 32 hex digits and never repeat, whichever threads draw them")
    void freshOnEveryThread() throws InterruptedException {
        Set<String> seen = ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        int perThread = 2_000;
        int threadCount = 2 * OwnerTokens.STRIPES + 1; // threads share stripes
        for (int t = 0; t < threadCount; t++) {
            Thread thread = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    seen.add(OwnerTokens.next());
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(seen).hasSize(threadCount * perThread).allMatch(t -> t.matches("[0-9a-f]{32}"));
    }
}
