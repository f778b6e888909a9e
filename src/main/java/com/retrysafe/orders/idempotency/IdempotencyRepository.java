package com.retrysafe.orders.idempotency;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.DatabaseErrors;
import com.retrysafe.orders.db.LeadQuery;
import com.retrysafe.orders.db.Rows;
import com.retrysafe.orders.db.WithQuery;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;

/** The {@code idempotency_record} table. Every method takes the client it runs on. */
@ApplicationScoped
public class IdempotencyRepository {

    /** The table; PostgreSQL names it in a lock wait for one of its rows. */
    static final String TABLE = "idempotency_record";

    private static final Uni<Object> NOTHING_TO_SET = Uni.createFrom().nullItem();

    /*
     * clock_timestamp(), not now(): inside the claiming transaction now() is the transaction's
     * start, and a record that expired since then must not be read as live (nor cached). A record
     * whose work is still running has no expiry ('infinity'). expires_in_ms is the time it has
     * left, both ends on the database's clock (RecordExpiry).
     */
    private static final String FIND_LIVE = """
            SELECT id, request_hash, status, http_status, response_json, response_location, resource_id,
                   CASE WHEN expires_at = 'infinity' THEN NULL
                        ELSE (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint END AS expires_in_ms
              FROM idempotency_record
             WHERE owner_id = $1 AND operation = $2 AND idempotency_key = $3
               AND expires_at > clock_timestamp()
            """;

    /*
     * FIND_LIVE for a request that reserves the id of the resource its step creates: when the key
     * is free it also draws that id, in the same round trip, so the step can write its answer
     * (which holds the id) with the claim (FreeKey). Always one row: the record's columns are null
     * when there is no live record, and the id is drawn only then.
     */
    private static final String FIND_LIVE_OR_RESERVE = """
            SELECT r.id, r.request_hash, r.status, r.http_status, r.response_json, r.response_location, r.resource_id,
                   CASE WHEN r.expires_at = 'infinity' THEN NULL
                        ELSE (extract(epoch FROM r.expires_at - clock_timestamp()) * 1000)::bigint END AS expires_in_ms,
                   CASE WHEN r.id IS NULL THEN nextval($4::text::regclass) END AS reserved_id
              FROM (VALUES (1)) AS read_once (one)
              LEFT JOIN idempotency_record r
                ON r.owner_id = $1 AND r.operation = $2 AND r.idempotency_key = $3
               AND r.expires_at > clock_timestamp()
            """;

    /*
     * Claims a free key. If another transaction holds the key uncommitted, this waits on the
     * unique index until that one ends (bounded by lock_timeout), then sees its outcome. A key
     * with a committed record is left alone: DO NOTHING takes no row lock and writes nothing, so a
     * duplicate that lost (a retry that came while its original ran) reads the winner in a
     * transaction that stays read-only, with no WAL flush at its COMMIT. (DO UPDATE ... WHERE, the
     * takeover in the same statement, locked the winner's row first: every such duplicate wrote a
     * tuple lock and flushed it.) An expired record in the way is taken over by TAKE_OVER_EXPIRED.
     *
     * RETURNING lifts the lock bound for the rest of the transaction, once the key is ours: its
     * statements are limited by statement_timeout (idempotency.db-timeout) alone. In one statement
     * with the claim: PostgreSQL's work per create is what bounds the creates per second on a small
     * machine (bench/README.md). For the same reason it draws the id of the resource the step will
     * create, when the request names a sequence (nextval of NULL is NULL): the step can then write its
     * answer, which holds that id, in its own statement (STORE_ANSWER_FOR_EACH).
     */
    private static final String CLAIM = """
            INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, expires_at)
            VALUES ($1, $2, $3, $4, 'PROCESSING', now() + $5::bigint * interval '1 millisecond')
            ON CONFLICT (owner_id, operation, idempotency_key) DO NOTHING
            RETURNING id, (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint AS expires_in_ms,
                      set_config('lock_timeout', '0', true) AS lock_bound_lifted,
                      nextval($6::text::regclass) AS reserved_id
            """;

    /*
     * CLAIM with the step's finished answer already on the record, as the first write of the step's
     * own statement (FreeKey): the record is inserted once, in its final state, and never updated.
     * It waits for a key held by an open transaction, and lifts the lock bound once the key is
     * ours, exactly as CLAIM does; the step's writes come after it (they depend on its row), so
     * their lock waits are bounded by statement_timeout alone. No row when a committed record holds
     * the key: the step then writes nothing, and the protocol reads the winner as after CLAIM.
     */
    static final LeadQuery CLAIM_WITH_ANSWER = new LeadQuery("""
            INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, http_status,
                                            response_json, response_location, resource_id, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + $10::bigint * interval '1 millisecond')
            ON CONFLICT (owner_id, operation, idempotency_key) DO NOTHING
            RETURNING id, (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint AS expires_in_ms,
                      set_config('lock_timeout', '0', true) AS lock_bound_lifted""", 10);

    /*
     * The takeover of an expired, finished record that the cleanup has not deleted yet: the key is
     * free again (API.md section 2). "expired" locks the row (FOR UPDATE) and, read twice, is
     * evaluated once, so the audit row (API.md section 10, as the cleanup would have written) and
     * the takeover both come from the version it locked. A second claimer waits on that lock
     * (bounded by lock_timeout) and then finds the row live: it takes nothing over and audits
     * nothing, so a record is audited once. Like the cleanup, it reads finished records only: one
     * whose work is still running never expires. Nothing comes back when there is no such record
     * (any more).
     */
    private static final String TAKE_OVER_EXPIRED = """
            WITH expired AS (
                SELECT id, owner_id, operation, idempotency_key, request_hash, status, http_status, resource_id,
                       created_at, updated_at, expires_at
                  FROM idempotency_record
                 WHERE owner_id = $1 AND operation = $2 AND idempotency_key = $3
                   AND expires_at <= now()
                   AND status IN ('SUCCEEDED', 'FAILED_FINAL')
                   FOR UPDATE
            ), audited AS (
                INSERT INTO idempotency_audit (owner_id, operation, idempotency_key, request_hash, status,
                                               http_status, resource_id, created_at, completed_at, expired_at)
                SELECT owner_id, operation, idempotency_key, request_hash, status, http_status, resource_id,
                       created_at, updated_at, expires_at
                  FROM expired
            )
            UPDATE idempotency_record r
               SET request_hash = $4,
                   status = 'PROCESSING',
                   http_status = NULL,
                   response_json = NULL,
                   response_location = NULL,
                   resource_id = NULL,
                   created_at = now(),
                   updated_at = now(),
                   expires_at = now() + $5::bigint * interval '1 millisecond'
              FROM expired
             WHERE r.id = expired.id
            RETURNING r.id, (extract(epoch FROM r.expires_at - clock_timestamp()) * 1000)::bigint AS expires_in_ms,
                      set_config('lock_timeout', '0', true) AS lock_bound_lifted,
                      nextval($6::text::regclass) AS reserved_id
            """;

    /*
     * An accepted request (stored still PROCESSING: its work goes on after this transaction) gets
     * no expiry: its record lives as long as its work, and whoever ends the work gives it end +
     * retention (finishAccepted). The body is stored as the text that is sent (a text column):
     * every replay sends these bytes. For a finished answer this changes no indexed column, so it is
     * a HOT update, with no new index entry (V9: keep it so; an index on status, resource_id or the
     * response would add one to every create).
     */
    private static final String COMPLETE = """
            UPDATE idempotency_record
               SET status = $2::text, http_status = $3, response_json = $4,
                   response_location = $5, resource_id = $6, updated_at = now(),
                   expires_at = CASE WHEN $2::text = 'PROCESSING' THEN 'infinity' ELSE expires_at END
             WHERE id = $1 AND status = 'PROCESSING'
            """;

    /* COMPLETE as the step's own write, for each row of the step's change (Claim.STORE_ANSWER_FOR_EACH). */
    static final WithQuery COMPLETE_FOR_EACH = new WithQuery(
            COMPLETE.strip() + " AND EXISTS (SELECT 1 FROM " + WithQuery.ROWS + ")\nRETURNING id", 6);

    /*
     * SKIP LOCKED: replicas running the job at once take different rows instead of queueing. Each
     * deleted row leaves its audit row (API.md section 10) in the same statement, so a record is
     * never gone without one, nor audited twice. The response body is not carried over. Records
     * of running work have no expiry ('infinity', at the far end of the expiry index), so the walk
     * never reaches them; the status test only says so.
     */
    private static final String DELETE_EXPIRED_BATCH = """
            WITH expired AS (
                DELETE FROM idempotency_record
                 WHERE id IN (SELECT id
                                FROM idempotency_record
                               WHERE expires_at <= now()
                                 AND status IN ('SUCCEEDED', 'FAILED_FINAL')
                               ORDER BY expires_at
                               LIMIT $1
                               FOR UPDATE SKIP LOCKED)
                RETURNING owner_id, operation, idempotency_key, request_hash, status, http_status, resource_id,
                          created_at, updated_at, expires_at
            )
            INSERT INTO idempotency_audit (owner_id, operation, idempotency_key, request_hash, status, http_status,
                                           resource_id, created_at, completed_at, expired_at)
            SELECT owner_id, operation, idempotency_key, request_hash, status, http_status, resource_id, created_at,
                   updated_at, expires_at
              FROM expired
            """;

    /*
     * The record that accepted a piece of work, found by its id, which the work kept from the
     * claiming transaction (StepResult.accepted): by primary key, so the record needs no index on
     * resource_id, and the update of every create (COMPLETE) stays HOT (V9). resource_id and the
     * status still guard it: a record that has ended, or that a later request took over (a takeover
     * resets resource_id), is never touched by old work. It had no expiry while the work ran
     * (API.md section 8: a record lives as long as its work); the final answer is kept for the
     * retention from now, the moment the work ended. The body is stored as the text that replays
     * send.
     */
    private static final String FINISH_ACCEPTED = """
            UPDATE idempotency_record
               SET status = $5, http_status = $6, response_json = $7, response_location = $8,
                   updated_at = now(), expires_at = clock_timestamp() + $9 * interval '1 millisecond'
             WHERE id = $1 AND operation = $2 AND resource_id = $3 AND owner_id = $4
               AND status IN ('PROCESSING', 'FAILED_RETRYABLE')
            """;

    /* Retried work's records go back to PROCESSING with it; $2 and $3 pair record ids with resource ids. */
    private static final String RESUME_ACCEPTED = """
            UPDATE idempotency_record r SET status = 'PROCESSING', updated_at = now()
              FROM unnest($2::bigint[], $3::bigint[]) AS accepted (record_id, resource_id)
             WHERE r.id = accepted.record_id AND r.operation = $1 AND r.resource_id = accepted.resource_id
               AND r.status = 'FAILED_RETRYABLE'
            """;

    private static final String ACCEPTED_RETRYABLE = """
            UPDATE idempotency_record SET status = 'FAILED_RETRYABLE', updated_at = now()
             WHERE id = $1 AND operation = $2 AND resource_id = $3 AND status = 'PROCESSING'
            """;

    public Uni<IdempotencyRecord> findLive(SqlClient client, IdempotentRequest request) {
        long sent = System.nanoTime();
        return client.preparedQuery(FIND_LIVE)
                .execute(Tuple.of(request.ownerId(), request.operation().name(), request.key().value()))
                .map(Rows.firstOrNull(row -> IdempotencyRecord.from(row, sent)));
    }

    /**
     * Step 1's read: the key's live record, or, when there is none, the id reserved for the
     * resource the step creates ({@code null} for a request that reserves none).
     */
    public Uni<Read> readBeforeClaim(SqlClient client, IdempotentRequest request) {
        if (request.reserveIdFrom() == null) {
            return findLive(client, request).map(live -> new Read(live, null));
        }
        long sent = System.nanoTime();
        return client.preparedQuery(FIND_LIVE_OR_RESERVE)
                .execute(Tuple.of(request.ownerId(), request.operation().name(), request.key().value(),
                        request.reserveIdFrom()))
                .map(Rows.firstOrNull(row -> row.getLong("id") == null ? new Read(null, row.getLong("reserved_id"))
                        : new Read(IdempotencyRecord.from(row, sent), null)));
    }

    /**
     * Claims a free key inside the caller's transaction. Emits the claim when this request now owns
     * the key, {@code null} when a committed record is there (live, or expired and left for
     * {@link #takeOverExpired}), and fails with {@link InFlightWaitExpired} when another request
     * held the key longer than the in-flight wait.
     *
     * @param holderWait how long a key held by another request's open transaction is waited for
     */
    public Uni<Claim> claim(SqlConnection tx, IdempotentRequest request, Duration retention, HolderWait holderWait) {
        return whileHolderWaits(tx, holderWait, claimWith(tx, CLAIM, request, retention));
    }

    /**
     * {@code claiming}, a statement that claims the key (sent right after), waiting at most
     * {@code holderWait} for another request holding it. A wait past it fails with
     * {@link InFlightWaitExpired}.
     */
    public <T> Uni<T> whileHolderWaits(SqlConnection tx, HolderWait holderWait, Uni<T> claiming) {
        // The wait for a concurrent holder of the key is bounded by the connection's default
        // lock_timeout, idempotency.in-flight-wait (see BoundedPgPoolCreator); the claim lifts it
        // once the key is taken. 1 ms, not 0: lock_timeout = 0 means no bound at all.
        Uni<?> failFastIfHeld = holderWait == HolderWait.IN_FLIGHT_WAIT ? NOTHING_TO_SET
                : tx.query("SET LOCAL lock_timeout = 1").execute();
        return Uni.combine().all().unis(failFastIfHeld, failsWhenHeldTooLong(claiming))
                .with((ignored, claim) -> claim);
    }

    /**
     * Takes over the key's expired, finished record, auditing it, inside the caller's transaction:
     * emits the claim, or {@code null} when there is no such record (another request took it over,
     * or the cleanup deleted it). Waits for, and fails like, {@link #claim}.
     */
    public Uni<Claim> takeOverExpired(SqlConnection tx, IdempotentRequest request, Duration retention) {
        return failsWhenHeldTooLong(claimWith(tx, TAKE_OVER_EXPIRED, request, retention));
    }

    /** A claiming statement whose wait for the key's holder ran past lock_timeout: {@link InFlightWaitExpired}. */
    private static <T> Uni<T> failsWhenHeldTooLong(Uni<T> claiming) {
        return claiming.onFailure(failure -> DatabaseErrors.hasSqlState(failure, DatabaseErrors.LOCK_NOT_AVAILABLE))
                .transform(failure -> new InFlightWaitExpired());
    }

    private static Uni<Claim> claimWith(SqlConnection tx, String sql, IdempotentRequest request, Duration retention) {
        long sent = System.nanoTime();
        return tx.preparedQuery(sql)
                .execute(Tuple.of(request.ownerId(), request.operation().name(), request.key().value(),
                        request.fingerprint(), retention.toMillis(), request.reserveIdFrom()))
                .map(Rows.firstOrNull(row -> new Claim(row.getLong("id"), RecordExpiry.in(row.getLong("expires_in_ms"), sent),
                        row.getLong("reserved_id"))));
    }

    /**
     * Stores the step's response as it is, and emits it: the first answer, and every replay from
     * the database or from the cache, are this same text.
     */
    public Uni<StoredResponse> complete(SqlConnection tx, long recordId, StepResult result) {
        StoredResponse response = result.response();
        return tx.preparedQuery(COMPLETE)
                .execute(addAnswer(Tuple.tuple(), recordId, result))
                .map(rows -> {
                    if (rows.rowCount() != 1) {
                        throw new IllegalStateException("Idempotency record " + recordId + " was not PROCESSING");
                    }
                    return response;
                });
    }

    /** COMPLETE's parameters, and COMPLETE_FOR_EACH's. */
    static Tuple addAnswer(Tuple parameters, long recordId, StepResult result) {
        StoredResponse response = result.response();
        return parameters
                .addLong(recordId)
                .addString(result.status().name())
                .addInteger(response.status())
                .addString(response.bodyJson())
                .addString(response.location())
                .addLong(response.resourceId());
    }

    /**
     * Ends the record {@code recordId} that accepted {@code final.resourceId()} for this owner with
     * its final answer, kept for {@code retention} from now; in the transaction that ends the work.
     * Emits 0 when that record no longer waits for this work.
     */
    public Uni<Integer> finishAccepted(SqlClient tx, long recordId, Operation operation, long ownerId,
            RecordStatus status, StoredResponse finalResponse, Duration retention) {
        return tx.preparedQuery(FINISH_ACCEPTED)
                .execute(Tuple.from(new Object[] { recordId, operation.name(), finalResponse.resourceId(), ownerId,
                        status.name(), finalResponse.status(), finalResponse.bodyJson(), finalResponse.location(),
                        retention.toMillis() }))
                .map(RowSet::rowCount);
    }

    /**
     * The records of accepted work that is being tried again go back to PROCESSING.
     *
     * @param recordIds the records, each with the resource of its work at the same index in {@code resourceIds}
     */
    public Uni<Integer> resumeAccepted(SqlClient tx, Operation operation, Long[] recordIds, Long[] resourceIds) {
        if (recordIds.length != resourceIds.length) {
            throw new IllegalArgumentException(
                    recordIds.length + " record ids for " + resourceIds.length + " resources");
        }
        return tx.preparedQuery(RESUME_ACCEPTED)
                .execute(Tuple.tuple().addString(operation.name()).addArrayOfLong(recordIds)
                        .addArrayOfLong(resourceIds))
                .map(RowSet::rowCount);
    }

    /** The record of accepted work whose attempt failed and will be retried: FAILED_RETRYABLE. */
    public Uni<Integer> markAcceptedRetryable(SqlClient tx, long recordId, Operation operation, long resourceId) {
        return tx.preparedQuery(ACCEPTED_RETRYABLE).execute(Tuple.of(recordId, operation.name(), resourceId))
                .map(RowSet::rowCount);
    }

    public Uni<Integer> deleteExpiredBatch(SqlClient client, int batchSize) {
        return client.preparedQuery(DELETE_EXPIRED_BATCH).execute(Tuple.of(batchSize)).map(rows -> rows.rowCount());
    }

    /**
     * Step 1's read.
     *
     * @param live the key's live record, or {@code null}
     * @param reservedId when there is none, the id drawn for the resource the step creates (null
     *        for a request that reserves none)
     */
    public record Read(IdempotencyRecord live, Long reservedId) {
    }

    /** The claim waited {@code idempotency.in-flight-wait} for another request holding the key. */
    public static final class InFlightWaitExpired extends RuntimeException {
        InFlightWaitExpired() {
            super("another request holds this key", null, false, false);
        }
    }
}
