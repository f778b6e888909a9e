package com.retrysafe.orders.payment.worker;

import java.net.InetAddress;
import java.net.URI;
import java.time.Duration;
import java.util.UUID;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.DatabaseErrors;
import com.retrysafe.orders.payment.PaymentFinisher;
import com.retrysafe.orders.payment.PaymentsConfig;
import com.retrysafe.orders.payment.provider.PaymentProvider;
import com.retrysafe.orders.tracing.TracedWork;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;

/** Runs this instance's payment worker, and the timer that refreshes the payment gauges. */
@ApplicationScoped
public class PaymentWorkers {

    private static final Logger LOG = Logger.getLogger(PaymentWorkers.class);

    private final PaymentsConfig config;
    private final Pool pool;
    private final PaymentTasks tasks;
    private final PaymentFinisher finisher;
    private final PaymentMetrics metrics;
    private final ObjectMapper json;
    private final Vertx vertx;
    private final TracedWork traced;
    private final DatabaseConfig database;
    private volatile PaymentWorker worker;
    private volatile long refreshTimer = -1;

    public PaymentWorkers(PaymentsConfig config, Pool pool, PaymentTasks tasks, PaymentFinisher finisher,
            PaymentMetrics metrics, ObjectMapper json, Vertx vertx, TracedWork traced, DatabaseConfig database) {
        this.config = config;
        this.pool = pool;
        this.tasks = tasks;
        this.finisher = finisher;
        this.metrics = metrics;
        this.json = json;
        this.vertx = vertx;
        this.traced = traced;
        this.database = database;
    }

    void start(@Observes StartupEvent event) {
        PaymentsConfig.Worker settings = config.worker();
        if (settings.lease().compareTo(config.provider().timeout()) <= 0) {
            // Every call would outlive its lease unless a heartbeat lands in time: takeovers galore.
            LOG.warnf("payments.worker.lease (%s) should be longer than payments.provider.timeout (%s)",
                    settings.lease(), config.provider().timeout());
        }
        refreshTimer = vertx.setPeriodic(Math.max(1, config.metrics().refreshInterval().toMillis()),
                id -> metrics.refresh(database.clientDeadline()).subscribe().with(ignored -> {
                }, failure -> LOG.debugf("Payment gauges not refreshed: %s", DatabaseErrors.describe(failure))));
        if (!settings.enabled()) {
            LOG.info("Payment worker disabled (payments.worker.enabled=false)");
            return;
        }
        String url = config.provider().url().filter(value -> !value.isBlank()).orElse(null);
        if (url == null) {
            LOG.warn("payments.provider.url is not set: payments are accepted and wait until a provider is configured");
            return;
        }
        worker = create(instanceId(), provider(URI.create(url), config.provider().timeout()), settings());
        worker.start(settings.pollInterval());
        LOG.infof("Payment worker %s polling every %s, lease %s, provider %s", worker.owner(),
                settings.pollInterval(), settings.lease(), url);
    }

    void stop(@Observes ShutdownEvent event) {
        if (worker != null) {
            worker.stop();
        }
        if (refreshTimer >= 0) {
            vertx.cancelTimer(refreshTimer);
        }
    }

    /** The worker settings from configuration; the heartbeat runs three times per lease. */
    public PaymentWorker.Settings settings() {
        PaymentsConfig.Worker worker = config.worker();
        return new PaymentWorker.Settings(worker.lease(), worker.lease().dividedBy(3), worker.backoff(),
                worker.backoffMax(), worker.concurrency());
    }

    public PaymentProvider provider(URI baseUri, Duration timeout) {
        return new PaymentProvider(baseUri, timeout, json);
    }

    /** A worker of its own: the instance's, or another one that tests run side by side with it. */
    public PaymentWorker create(String owner, PaymentProvider provider, PaymentWorker.Settings settings) {
        return create(owner, pool, provider, settings);
    }

    /** A worker that reaches the database through {@code through} (tests cut it). */
    PaymentWorker create(String owner, Pool through, PaymentProvider provider, PaymentWorker.Settings settings) {
        return new PaymentWorker(owner, through, tasks, finisher, provider, metrics, vertx, traced, settings,
                database.clientDeadline());
    }

    private static String instanceId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "unknown";
        }
        String id = host + "-" + UUID.randomUUID().toString().substring(0, 8);
        return id.length() <= 100 ? id : id.substring(id.length() - 100);
    }
}
