package com.retrysafe.orders.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** What a well-behaved client does after a fault: retry with the same key, and check replays. */
final class Clients {

    private Clients() {
    }

    /**
     * Retries one key until it gets a final answer (201 or 4xx other than 409 in progress and 429), as a
     * client honouring Retry-After would; every answer on the way goes to {@code seen}. A key
     * still without a final answer at the deadline fails the scenario here, with its last answer.
     */
    static Answer retryUntilFinal(String base, String token, String key, String body, long deadlineNanos,
            List<Answer> seen) throws InterruptedException {
        while (true) {
            Answer answer = Answer.sendAndWait(base, token, key, body, Duration.ofSeconds(15));
            synchronized (seen) {
                seen.add(answer);
            }
            boolean again = !answer.answered() || answer.status() == 503 || answer.status() == 429
                    || answer.outcomeUnknown()
                    || (answer.status() == 409 && answer.retryAfter() != null);
            if (!again) {
                return answer;
            }
            if (System.nanoTime() > deadlineNanos) {
                throw new AssertionError("key " + key + " has no final answer by the deadline; the last: " + answer);
            }
            // A client's pace between retries (Retry-After: 1 asks for more): the retries are the
            // point here, not a wait for a condition.
            TimeUnit.MILLISECONDS.sleep(200);
        }
    }

    /**
     * Sends every key once more: each must replay its first 201, with the same body and Location.
     * @return the mismatches
     */
    static List<String> replayAll(String base, String token, Map<String, String> bodies,
            Map<String, String> firstCreated, List<Answer> seen) {
        List<CompletableFuture<Answer>> replays = new ArrayList<>();
        for (Map.Entry<String, String> created : firstCreated.entrySet()) {
            replays.add(Answer.send(base, token, created.getKey(), bodies.get(created.getKey()),
                    Duration.ofSeconds(15)));
        }
        List<String> mismatches = new ArrayList<>();
        for (CompletableFuture<Answer> pending : replays) {
            Answer replay = pending.join();
            synchronized (seen) {
                seen.add(replay);
            }
            String first = firstCreated.get(replay.key());
            if (replay.status() != 201 || !"true".equals(replay.replayed())
                    || !Objects.equals(replay.json(), Answer.JSON.valueToTree(parse(first)))) {
                mismatches.add(replay + " but the first answer was 201 " + first);
            }
        }
        return mismatches;
    }

    private static Object parse(String json) {
        try {
            return Answer.JSON.readTree(json);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** 5xx answers that are defects: neither a 503 nor an honest outcome-unknown. */
    static long fiveHundreds(List<Answer> answers) {
        return answers.stream().filter(a -> a.status() >= 500 && a.status() != 503 && !a.outcomeUnknown()).count();
    }

    /** Answers that ask for a retry with the same key: 503, or outcome-unknown. */
    static long unavailable(List<Answer> answers) {
        return answers.stream().filter(a -> a.status() == 503 || a.outcomeUnknown()).count();
    }

    static long worstMillis(List<Answer> answers) {
        return answers.stream().filter(Answer::answered).mapToLong(Answer::millis).max().orElse(0);
    }
}
