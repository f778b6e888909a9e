package com.retrysafe.orders.idempotency;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.idempotency.Decision.Answer;
import com.retrysafe.orders.idempotency.Decision.Executed;
import com.retrysafe.orders.idempotency.Decision.InProgress;
import com.retrysafe.orders.idempotency.Decision.Replayed;

import io.smallrye.mutiny.Uni;

class RunningHereTest {

    private static final IdempotentRequest REQUEST = new IdempotentRequest(Operation.CREATE_ORDER, 7,
            new IdempotencyKey("running-here-0001"), "fingerprint-1");
    private static final StoredResponse CREATED = new StoredResponse(201, "{\"orderId\":1}", "/api/orders/1", 1L);

    /*
     * Duplicates wait on one shared signal of the original's end. One whose wait runs out must
     * leave that signal alone: the laptop pass of ConcurrentCreateIT answered 500 to every other
     * waiting duplicate when the first wait ran out (a CancellationException).
     */
    @Test
    void aDuplicateWhoseWaitRunsOutLeavesTheOthersWaitingForTheOriginal() throws Exception {
        RunningHere runningHere = new RunningHere();
        CompletableFuture<Answer> original = new CompletableFuture<>();
        CompletableFuture<Answer> originalAnswer = runningHere
                .run(REQUEST, Duration.ofSeconds(30), () -> Uni.createFrom().completionStage(original))
                .subscribeAsCompletionStage();
        CompletableFuture<Answer> patient = runningHere
                .run(REQUEST, Duration.ofSeconds(30), () -> Uni.createFrom().failure(new AssertionError("not again")))
                .subscribeAsCompletionStage();

        Answer impatient = runningHere
                .run(REQUEST, Duration.ofMillis(50), () -> Uni.createFrom().failure(new AssertionError("not again")))
                .await().atMost(Duration.ofSeconds(10));
        assertInstanceOf(InProgress.class, impatient, "its wait ran out with the original still running");
        assertFalse(patient.isDone(), "the other duplicate still waits for the original: " + patient);

        original.complete(new Executed(CREATED, true, RecordExpiry.NEVER));
        assertInstanceOf(Executed.class, originalAnswer.get(10, TimeUnit.SECONDS));
        Replayed replayed = assertInstanceOf(Replayed.class, patient.get(10, TimeUnit.SECONDS));
        assertEquals(CREATED, replayed.response(), "it replays what the original answered");
    }
}
