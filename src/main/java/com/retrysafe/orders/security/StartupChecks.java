package com.retrysafe.orders.security;

import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.interceptor.Interceptor;

import org.eclipse.microprofile.config.Config;
import org.jboss.logging.Logger;

import com.retrysafe.orders.events.inbox.InboxConfig;
import com.retrysafe.orders.events.outbox.OutboxConfig;
import com.retrysafe.orders.idempotency.IdempotencyConfig;
import com.retrysafe.orders.payment.PaymentsConfig;

import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.StartupEvent;

/**
 * Refuses to start a misconfigured production instance rather than serve wrongly: without a JWT
 * verification key every request would be rejected (or, worse, a default would be trusted),
 * without an issuer tokens of any issuer signed with the key would pass, and without a JDBC URL
 * Flyway would have skipped the schema.
 * <p>
 * It also holds the bounds of our numeric settings. They are checked here rather than with
 * {@code @Min}/{@code @Max} on the config interfaces: one constraint on any config mapping makes
 * Quarkus build a Hibernate Validator for all of its two hundred config classes at every start,
 * a fifth of the main thread's start-up work (issue 15). Runs first of all start-up observers,
 * before the schema is touched.
 */
@ApplicationScoped
public class StartupChecks {

    private static final Logger LOG = Logger.getLogger(StartupChecks.class);

    void onStart(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE - 2) StartupEvent event, Config config,
            IdempotencyConfig idempotency, OutboxConfig outbox, InboxConfig inbox, PaymentsConfig payments) {
        int mismatch = idempotency.mismatchStatus();
        if (mismatch != 409 && mismatch != 422) {
            throw new IllegalStateException("idempotency.mismatch-status must be 409 or 422, not " + mismatch);
        }
        within("idempotency.cleanup.batch-size", idempotency.cleanup().batchSize(), 1, 100_000);
        within("idempotency.redis.breaker.failure-threshold", idempotency.redis().breaker().failureThreshold(), 1,
                Integer.MAX_VALUE);
        within("outbox.relay.batch-size", outbox.relay().batchSize(), 1, 10_000);
        within("outbox.cleanup.batch-size", outbox.cleanup().batchSize(), 1, 100_000);
        within("inbox.db-retries", inbox.dbRetries(), 0, 20);
        within("payments.worker.concurrency", payments.worker().concurrency(), 1, 1000);
        if (config.getOptionalValue("quarkus.datasource.jdbc.url", String.class).isEmpty()) {
            throw new IllegalStateException("No database configured: set QUARKUS_DATASOURCE_REACTIVE_URL "
                    + "(the JDBC URL for Flyway is derived from it) or QUARKUS_DATASOURCE_JDBC_URL");
        }
        if (idempotency.redis().enabled()
                && config.getOptionalValue("quarkus.redis.hosts", String.class).isEmpty()) {
            throw new IllegalStateException("IDEMPOTENCY_REDIS_ENABLED is true but no Redis is configured: "
                    + "set QUARKUS_REDIS_HOSTS (e.g. redis://redis:6379), or switch the fast layer off");
        }
        if (LaunchMode.current() == LaunchMode.NORMAL) {
            boolean keyConfigured = config.getOptionalValue("mp.jwt.verify.publickey.location", String.class).isPresent()
                    || config.getOptionalValue("mp.jwt.verify.publickey", String.class).isPresent()
                    || config.getOptionalValue("smallrye.jwt.verify.key.location", String.class).isPresent();
            if (!keyConfigured) {
                throw new IllegalStateException("No JWT verification key configured: set "
                        + "MP_JWT_VERIFY_PUBLICKEY_LOCATION (a PEM file path or URL) and MP_JWT_VERIFY_ISSUER");
            }
            if (config.getOptionalValue("mp.jwt.verify.issuer", String.class).filter(s -> !s.isBlank()).isEmpty()) {
                // Without it, "wrong issuer -> 401" (API.md section 1) cannot hold.
                throw new IllegalStateException("No JWT issuer configured: set MP_JWT_VERIFY_ISSUER to the issuer"
                        + " (iss) your tokens carry");
            }
        }
    }

    private static void within(String name, int value, int min, int max) {
        if (value < min || value > max) {
            String range = max == Integer.MAX_VALUE ? "at least " + min : "between " + min + " and " + max;
            throw new IllegalStateException(name + " must be " + range + ", not " + value + " (environment variable "
                    + name.toUpperCase(java.util.Locale.ROOT).replace('.', '_').replace('-', '_') + ")");
        }
    }
}
