-- The relay's PostgreSQL work for one batch (bench/shapes.sh runs it after a window, alone, until
-- the window's outbox rows are drained): OutboxRelay's transaction as OutboxRepository sends it,
-- BEGIN, the planner setting, CLAIM_BATCH, MARK_PUBLISHED, COMMIT, then the gauge
-- (OLDEST_UNPUBLISHED_AGE, in a transaction of its own under the same setting). pgbench cannot
-- carry the claimed ids over, so the mark re-selects the head rows this transaction has locked
-- (its own locks do not make it skip them).
BEGIN;
SET LOCAL enable_sort = off;
SELECT event_id, aggregate_type, aggregate_id, event_type, payload::text AS payload, created_at, attempts, trace_parent FROM outbox_event e WHERE published_at IS NULL AND next_attempt_at <= now() AND NOT EXISTS (SELECT 1 FROM outbox_event earlier WHERE earlier.aggregate_type = e.aggregate_type AND earlier.aggregate_id = e.aggregate_id AND earlier.published_at IS NULL AND earlier.seq < e.seq OFFSET 0) ORDER BY seq LIMIT 100 FOR UPDATE SKIP LOCKED;
UPDATE outbox_event SET published_at = now(), attempts = attempts + 1, last_error = NULL WHERE event_id = ANY (ARRAY(SELECT event_id FROM outbox_event WHERE published_at IS NULL AND next_attempt_at <= now() ORDER BY seq LIMIT 100 FOR UPDATE SKIP LOCKED)) AND published_at IS NULL;
COMMIT;
BEGIN;
SET LOCAL enable_sort = off;
SELECT GREATEST(0, COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - (SELECT created_at FROM outbox_event WHERE published_at IS NULL ORDER BY seq LIMIT 1)), 0))::double precision AS age;
COMMIT;
