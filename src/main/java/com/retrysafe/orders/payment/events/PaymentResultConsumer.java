package com.retrysafe.orders.payment.events;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Acknowledgment;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.db.BoundedTransaction;
import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.DatabaseErrors;
import com.retrysafe.orders.db.OutcomeUnknownException;
import com.retrysafe.orders.events.inbox.InboxConfig;
import com.retrysafe.orders.events.inbox.InboxMetrics;
import com.retrysafe.orders.events.inbox.InboxRepository;
import com.retrysafe.orders.payment.PaymentFinisher;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalOutcome;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalResult;

import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQRejectMetadata;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * Consumes {@code payment.result} messages (API.md section 9) idempotently: in one transaction the
 * message id is recorded in {@code inbox_message} and, only when it was new, the result is applied.
 * The message is acknowledged only after that commit, so a crash before the ack means a
 * redelivery, which finds the row and does nothing more. The transaction runs under the deadline
 * the request paths use ({@link BoundedTransaction}), which closes its connection: a database that
 * stopped answering (a partitioned primary) holds one message for that long, not until TCP gives
 * up, and the message is tried again. The result is applied by
 * {@link PaymentFinisher}, as the worker's would be; a result for a payment that already ended
 * (or that does not exist) is recorded and changes nothing.
 * <p>
 * A bean from start-up on, so that {@code inbox_messages_total} has every result's series before
 * the first message.
 */
@Startup
@ApplicationScoped
public class PaymentResultConsumer {

    public static final String CHANNEL = "payment-results";
    private static final Logger LOG = Logger.getLogger(PaymentResultConsumer.class);
    private static final int LOGGED_BODY_LENGTH = 200;

    private final Pool pool;
    private final InboxRepository inbox;
    private final PaymentFinisher finisher;
    private final InboxMetrics metrics;
    private final InboxConfig config;
    private final ObjectMapper json;
    private final Duration dbDeadline;

    public PaymentResultConsumer(Pool pool, InboxRepository inbox, PaymentFinisher finisher,
            InboxMetrics metrics, InboxConfig config, ObjectMapper json, DatabaseConfig database) {
        this.pool = pool;
        this.inbox = inbox;
        this.finisher = finisher;
        this.metrics = metrics;
        this.config = config;
        this.json = json;
        this.dbDeadline = database.clientDeadline();
        metrics.register(Arrays.stream(ExternalResult.values()).map(Enum::name).toList());
    }

    @Incoming(CHANNEL)
    @Acknowledgment(Acknowledgment.Strategy.MANUAL)
    public Uni<Void> consume(Message<Object> message) {
        byte[] body = bytes(message.getPayload());
        PaymentResult result;
        try {
            result = PaymentResult.parse(json, body);
        } catch (PaymentResult.Malformed malformed) {
            // Redelivering it would fail the same way forever: acknowledge, log, count.
            LOG.warnf("Malformed payment result acknowledged and dropped (%s): %s", malformed.getMessage(),
                    escape(new String(body, 0, Math.min(body.length, LOGGED_BODY_LENGTH), StandardCharsets.UTF_8)));
            return Uni.createFrom().completionStage(message.ack()).invoke(() -> metrics.count(InboxMetrics.MALFORMED));
        }
        return applyOnce(result)
                .onFailure(PaymentResultConsumer::worthAnotherTry).retry()
                .withBackOff(Duration.ofMillis(100), Duration.ofSeconds(2)).atMost(config.dbRetries())
                .onItemOrFailure().transformToUni((outcome, failure) -> {
                    if (failure == null) {
                        return Uni.createFrom().completionStage(message.ack()).invoke(() -> metrics.count(outcome));
                    }
                    boolean transientFailure = worthAnotherTry(failure);
                    LOG.warnf("Payment result %s not applied, %s: %s", escape(result.messageId()),
                            transientFailure ? "requeued" : "rejected", DatabaseErrors.describe(failure));
                    // A passing database failure is retried by the redelivery; anything else would
                    // fail again, so it is rejected (to the queue's dead-letter exchange, if any).
                    return Uni.createFrom().completionStage(
                            message.nack(failure, Metadata.of(new RabbitMQRejectMetadata(transientFailure))));
                });
    }

    /**
     * A passing database failure, or a COMMIT whose answer was lost: applying the message again is
     * safe either way, since a delivery that finds its inbox row does nothing more.
     */
    private static boolean worthAnotherTry(Throwable failure) {
        return DatabaseErrors.isTransient(failure) || failure instanceof OutcomeUnknownException;
    }

    /**
     * Emits what applying the result did (an {@link ExternalResult}'s name), or
     * {@link InboxMetrics#DUPLICATE} when the message id was seen before.
     */
    Uni<String> applyOnce(PaymentResult result) {
        return BoundedTransaction.run(pool, dbDeadline, tx -> inbox.record(tx, result.messageId(), result.paymentId(), result.outcome())
                .flatMap(first -> first
                        ? finisher.applyExternalResult(tx, result.paymentId(), ExternalOutcome.valueOf(result.outcome()))
                                .map(Enum::name)
                                .call(applied -> inbox.setResult(tx, result.messageId(), applied))
                        : Uni.createFrom().item(InboxMetrics.DUPLICATE)));
    }

    private static byte[] bytes(Object payload) {
        if (payload instanceof byte[] raw) {
            return raw;
        }
        if (payload instanceof io.vertx.core.buffer.Buffer buffer) {
            return buffer.getBytes();
        }
        if (payload instanceof io.vertx.mutiny.core.buffer.Buffer buffer) {
            return buffer.getBytes();
        }
        if (payload instanceof JsonObject object) {
            return object.encode().getBytes(StandardCharsets.UTF_8);
        }
        if (payload instanceof JsonArray array) {
            return array.encode().getBytes(StandardCharsets.UTF_8);
        }
        return payload == null ? new byte[0] : payload.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Whatever came from the broker, on one log line that it cannot forge. */
    static String escape(String text) {
        StringBuilder escaped = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            switch (c) {
                case '\n' -> escaped.append("\\n");
                case '\r' -> escaped.append("\\r");
                case '\t' -> escaped.append("\\t");
                default -> {
                    if (Character.isISOControl(c)) {
                        escaped.append(String.format("\\u%04x", (int) c));
                    } else {
                        escaped.append(c);
                    }
                }
            }
        }
        return escaped.toString();
    }
}
