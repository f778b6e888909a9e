-- The ceiling: exactly the SQL one order creation runs (bench/run.sh runs this file with
-- pgbench -n -M prepared -f bench/ceiling.sql -T DURATION -c 16|64 -j 2). Keep it in step with
-- IdempotencyRepository (FIND_LIVE_OR_RESERVE; an expired key's takeover is not on this path) and
-- OrderRepository (PLACE_CLAIMING, with IdempotencyRepository's CLAIM_WITH_ANSWER first in its WITH
-- and OutboxRepository's INSERT_FOR_EACH): 4 statements. The lookup draws the order's id when the
-- key is free, and \gset carries it into the step's statement, which claims the key by inserting
-- the record with its answer (the service sends the answer's JSON text as a parameter, made here
-- from the same values). The service sets lock_timeout per connection (a startup parameter); the
-- claim lifts it in its RETURNING. Keys are 'pg-<k>' and order numbers 'PG-<k>', which the
-- correctness checks of run.sh tell apart from the service's. Not in it: the relay's later work on
-- the outbox row (its batch claim and MARK_PUBLISHED), which the service's PostgreSQL CPU per create
-- does include.
\set k random(1, 9000000000000000)
\set owner random(1, 1000000)
\set sku random(1, 1000)
SELECT r.id, r.request_hash, r.status, r.http_status, r.response_json, r.response_location, r.resource_id, CASE WHEN r.expires_at = 'infinity' THEN NULL ELSE (extract(epoch FROM r.expires_at - clock_timestamp()) * 1000)::bigint END AS expires_in_ms, CASE WHEN r.id IS NULL THEN nextval('purchase_order_id_seq'::text::regclass) END AS reserved_id FROM (VALUES (1)) AS read_once (one) LEFT JOIN idempotency_record r ON r.owner_id = :owner AND r.operation = 'CREATE_ORDER' AND r.idempotency_key = 'pg-' || :k AND r.expires_at > clock_timestamp()
\gset
BEGIN;
WITH claimed AS (INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, http_status, response_json, response_location, resource_id, expires_at) VALUES (:owner, 'CREATE_ORDER', 'pg-' || :k, repeat('a', 64), 'SUCCEEDED', 201, '{"orderId":' || :reserved_id || ',"orderNo":"PG-' || :k || '","status":"CREATED","skuId":' || :sku || ',"quantity":1}', '/api/orders/' || :reserved_id, :reserved_id, now() + 86400000::bigint * interval '1 millisecond') ON CONFLICT (owner_id, operation, idempotency_key) DO NOTHING RETURNING id, (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint AS expires_in_ms, set_config('lock_timeout', '0', true) AS lock_bound_lifted), taken AS (UPDATE sku_inventory SET available = available - 1, updated_at = now() WHERE sku_id = :sku AND available >= 1 AND EXISTS (SELECT 1 FROM claimed) RETURNING sku_id), placed AS (INSERT INTO purchase_order (id, order_no, owner_id, sku_id, quantity, status) SELECT :reserved_id, 'PG-' || :k, :owner, taken.sku_id, 1, 'CREATED' FROM taken RETURNING id), event AS (INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, trace_parent) SELECT gen_random_uuid(), 'order', :reserved_id::text, 'order.created', ('{"orderId":' || :reserved_id || ',"orderNo":"PG-' || :k || '","status":"CREATED","skuId":' || :sku || ',"quantity":1}')::text::jsonb, NULL FROM placed) SELECT (SELECT id FROM claimed) AS claimed_record, (SELECT expires_in_ms FROM claimed) AS claimed_expires_in_ms, EXISTS (SELECT 1 FROM placed) AS changed;
COMMIT;
