package com.retrysafe.orders.idempotency.cache;

import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.retrysafe.orders.common.JsonText;
import com.retrysafe.orders.idempotency.IdempotencyConfig;
import com.retrysafe.orders.idempotency.IdempotentRequest;
import com.retrysafe.orders.idempotency.RecordExpiry;
import com.retrysafe.orders.idempotency.StoredResponse;

import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Response;

/**
 * The Redis fast layer in front of the idempotency records (API.md section 7a). It only ever
 * saves work: a cached replay skips the database read, and an in-flight marker lets a duplicate
 * skip waiting on the first request's lock. It never lets a request execute; only the database
 * claim does that. Every call is bounded by {@code idempotency.redis.timeout} and any failure
 * reads as "nothing cached", so Redis down, slow or flushed changes no answer.
 *
 * <p>One key per request, {@code idem:{operation}:{owner}:{key}}, holding either an in-flight
 * marker or the finished response. No token and no request body is ever written.
 */
@ApplicationScoped
public class IdempotencyCache {

    private static final Logger LOG = Logger.getLogger(IdempotencyCache.class);

    private static final String MARKER_PREFIX = "inflight:";
    /** Deletes the marker only if it is still ours, so a late release never removes another's. */
    private static final String RELEASE_IF_OWNED = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
            return 0""";
    /*
     * Stores a finished response over this request's own marker (ARGV[2]; empty: none) or into an
     * empty key, never over another request's marker or entry, for ARGV[3] ms: the least of the
     * record's remaining lifetime and result-ttl, worked out by the caller (RecordExpiry). Relative,
     * so Redis's own clock never enters: an entry cannot outlive its record by a clock skew.
     */
    private static final String REMEMBER = """
            local current = redis.call('GET', KEYS[1])
            if current and current ~= ARGV[2] then return 0 end
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
            return 1""";
    private static final Uni<CacheLookup> NOTHING = Uni.createFrom().item(CacheLookup.NOTHING);
    private static final Uni<InFlightMarker> NO_MARKER = Uni.createFrom().item(InFlightMarker.NONE);
    private static final Uni<Void> DONE = Uni.createFrom().voidItem();

    private final IdempotencyConfig.Redis config;
    /** Null when the fast layer is off: then nothing here touches Redis. */
    private final ReactiveRedisDataSource redis;
    private final CacheMetrics metrics;
    private final CacheBreaker breaker;
    private final ObjectReader reader;
    private final ObjectWriter writer;

    IdempotencyCache(IdempotencyConfig config, Instance<ReactiveRedisDataSource> redis, ObjectMapper mapper,
            CacheMetrics metrics) {
        this.config = config.redis();
        this.redis = this.config.enabled() ? redis.get() : null;
        this.metrics = metrics;
        this.breaker = new CacheBreaker(this.config.breaker().failureThreshold(), this.config.breaker().openFor());
        this.reader = mapper.readerFor(CachedResponse.class);
        this.writer = mapper.writerFor(CachedResponse.class);
        if (this.redis != null) {
            LOG.infof("Idempotency fast layer on: Redis calls bounded by %s, results cached up to %s",
                    this.config.timeout(), this.config.resultTtl());
        }
    }

    public boolean enabled() {
        return redis != null;
    }

    /** "off", "ok", or "degraded" while the breaker keeps Redis out of the way. */
    public String state() {
        return redis == null ? "off" : breaker.isOpen() ? "degraded" : "ok";
    }

    public Uni<CacheLookup> lookup(IdempotentRequest request) {
        if (redis == null) {
            return NOTHING;
        }
        return call(() -> redis.execute(Command.GET, key(request)), answer -> {
            if (answer == null) {
                metrics.count(CacheResult.MISS);
                return CacheLookup.NOTHING;
            }
            String value = answer.toString();
            CacheLookup lookup = value.startsWith(MARKER_PREFIX) ? CacheLookup.IN_FLIGHT
                    : new CacheLookup(decode(value), false);
            metrics.count(CacheResult.HIT);
            return lookup;
        }, CacheLookup.NOTHING);
    }

    /** Marks the key as being worked on, for at most {@code idempotency.redis.in-flight-ttl}. */
    public Uni<InFlightMarker> markInFlight(IdempotentRequest request) {
        if (redis == null) {
            return NO_MARKER;
        }
        String token = UUID.randomUUID().toString();
        String ttl = Long.toString(config.inFlightTtl().toMillis());
        return call(() -> redis.execute(Command.SET, key(request), MARKER_PREFIX + token, "NX", "PX", ttl),
                answer -> answer == null ? InFlightMarker.CONTENDED : new InFlightMarker(token, false),
                InFlightMarker.NONE);
    }

    /**
     * Caches a finished response, replacing this request's own marker (or none: then only into an
     * empty key). Called only after the record is committed.
     *
     * @param recordExpiry when the record expires: the entry never outlives it
     */
    public Uni<Void> remember(IdempotentRequest request, InFlightMarker marker, StoredResponse response,
            RecordExpiry recordExpiry) {
        if (redis == null) {
            return DONE;
        }
        // Measured here, just before the call: a record that has (almost) run out is not cached.
        long lifetime = Math.min(recordExpiry.remainingMillis(), config.resultTtl().toMillis());
        if (lifetime <= 0) {
            return DONE;
        }
        String value = encode(CachedResponse.of(request.fingerprint(), response));
        String ownMarker = marker.token() == null ? "" : MARKER_PREFIX + marker.token();
        return call(() -> redis.execute(Command.EVAL, REMEMBER, "1", key(request), value, ownMarker,
                Long.toString(lifetime)), answer -> null, null);
    }

    /** Drops this request's marker after it ended without a stored response. */
    public Uni<Void> release(IdempotentRequest request, InFlightMarker marker) {
        if (redis == null || marker.token() == null) {
            return DONE;
        }
        return call(() -> redis.execute(Command.EVAL, RELEASE_IF_OWNED, "1", key(request),
                MARKER_PREFIX + marker.token()), answer -> null, null);
    }

    static String key(IdempotentRequest request) {
        // The key's alphabet has no ':' (IdempotencyKey), so the parts can't run into each other.
        return "idem:" + request.operation().name() + ':' + request.ownerId() + ':' + request.key().value();
    }

    /**
     * Runs one Redis command within the timeout. Any failure counts as an error, feeds the
     * breaker and yields {@code fallback}: the caller goes on as if Redis had nothing.
     */
    private <R> Uni<R> call(Supplier<Uni<? extends Response>> command, Function<Response, R> onAnswer, R fallback) {
        if (!breaker.allowsCall()) {
            metrics.count(CacheResult.BYPASS);
            return Uni.createFrom().item(fallback);
        }
        Context requestContext = Vertx.currentContext();
        Uni<R> answered = Uni.createFrom().<Response> deferred(command)
                .ifNoItem().after(config.timeout()).fail()
                .map(answer -> {
                    R result = onAnswer.apply(answer);
                    breaker.succeeded();
                    return result;
                })
                .onFailure().recoverWithItem(failure -> {
                    metrics.count(CacheResult.ERROR);
                    breaker.failed(failure);
                    LOG.debugf("Redis call failed, the database decides: %s", failure.toString());
                    return fallback;
                });
        // Only a timeout leaves the event loop (it fires on a timer thread): bring that one back to
        // the request's context. A Redis answer arrives on an event loop and goes on there inline,
        // as a database answer does, without queueing another task.
        return requestContext == null ? answered : answered.emitOn(backOnEventLoop(requestContext));
    }

    private static Executor backOnEventLoop(Context requestContext) {
        return task -> {
            if (Context.isOnEventLoopThread()) {
                task.run();
            } else {
                requestContext.runOnContext(ignored -> task.run());
            }
        };
    }

    private CachedResponse decode(String value) {
        try {
            return reader.readValue(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("unreadable cache entry", e);
        }
    }

    private String encode(CachedResponse cached) {
        return JsonText.write(writer, cached, "cache entry not serializable");
    }
}
