package com.retrysafe.orders.idempotency;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import com.retrysafe.orders.idempotency.Decision.Answer;
import com.retrysafe.orders.idempotency.Decision.Replayed;
import com.retrysafe.orders.idempotency.Decision.WithResponse;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * The keys this instance is running a request on right now. A duplicate that arrives here while
 * its original runs here (a double click, a gateway's retry) waits for the original in memory,
 * without a database connection, instead of queueing on the key in the database with one: that
 * queue held pool connections the originals needed, and every waiting duplicate cost a transaction.
 *
 * <p>When the original ends with a finished answer to the same request (same fingerprint), the
 * duplicate is answered with it as a replay: it is what the committed record says, and what a read
 * of it would return. Any other end (a failure, a conflict, accepted work that goes on, another
 * fingerprint) sends the duplicate through the whole protocol, where the database decides as for
 * any request. One still waiting after {@code idempotency.in-flight-wait} is a request in progress,
 * as in the database. Duplicates that reach other replicas wait in the database as before.
 */
final class RunningHere {

    private record Scope(Operation operation, long ownerId, String key) {
    }

    private record Run(String fingerprint, CompletableFuture<Answer> ended) {
    }

    /* The wait ran out with the original still running. Compared by identity. */
    private static final Answer STILL_RUNNING = new Decision.InProgress();

    private final ConcurrentHashMap<Scope, Run> running = new ConcurrentHashMap<>();

    /**
     * @param protocol the whole protocol for this request, subscribed at most once
     * @param inFlightWait how long a duplicate waits for its original
     */
    Uni<Answer> run(IdempotentRequest request, Duration inFlightWait, Supplier<Uni<Answer>> protocol) {
        Scope scope = new Scope(request.operation(), request.ownerId(), request.key().value());
        Run mine = new Run(request.fingerprint(), new CompletableFuture<>());
        Run original = running.putIfAbsent(scope, mine);
        if (original == null) {
            return protocol.get().onTermination().invoke((answer, failure, cancelled) -> {
                running.remove(scope, mine);
                mine.ended().complete(failure == null && !cancelled ? answer : null);
            });
        }
        // A copy of its own: a wait that runs out cancels what it waits on, and the original's end
        // is shared by every duplicate waiting for it.
        Uni<Answer> ended = Uni.createFrom().completionStage(original.ended().copy())
                .ifNoItem().after(inFlightWait).recoverWithItem(STILL_RUNNING);
        Executor back = backToCaller();
        return (back == null ? ended : ended.emitOn(back)).flatMap(answer -> {
            if (answer == STILL_RUNNING) {
                return Uni.createFrom().item(ProtocolRules.heldByAnother());
            }
            if (answer instanceof WithResponse finished && finished.finished()
                    && original.fingerprint().equals(request.fingerprint())) {
                return Uni.createFrom().item(new Replayed(finished.response(), true, finished.expiry()));
            }
            return protocol.get();
        });
    }

    /* The original ends on its own thread; the duplicate goes on on its own Vert.x context. */
    private static Executor backToCaller() {
        Context context = Vertx.currentContext();
        return context == null ? null : command -> context.runOnContext(ignored -> command.run());
    }
}
