-- The ceiling: exactly the SQL one order creation runs (bench/run.sh runs this file with
-- pgbench -n -M prepared -f bench/ceiling.sql -T DURATION -c 16|64 -j 2). Keep it in step with
-- IdempotencyRepository (FIND_LIVE, CLAIM; an expired key's takeover is not on this path) and
-- OrderRepository (PLACE, with OutboxRepository's INSERT_FOR_EACH and IdempotencyRepository's
-- COMPLETE_FOR_EACH in its WITH): 5 statements. The claim draws the order's id from the order
-- sequence, and \gset carries it and the record's id into PLACE, as the service does; the
-- service sends the answer's JSON text as a parameter, made here from the same values. The service
-- sets lock_timeout per connection (a startup parameter); the claim lifts it in its RETURNING.
-- Keys are 'pg-<k>' and order numbers 'PG-<k>', which the correctness checks of run.sh tell apart
-- from the service's. Not in it: the relay's later work on the outbox row (its batch claim and
-- MARK_PUBLISHED), which the service's PostgreSQL CPU per create does include.
\set k random(1, 9000000000000000)
\set owner random(1, 1000000)
\set sku random(1, 1000)
SELECT id, request_hash, status, http_status, response_json, response_location, resource_id, CASE WHEN expires_at = 'infinity' THEN NULL ELSE (extract(epoch FROM expires_at) * 1000)::bigint END AS expires_at_ms FROM idempotency_record WHERE owner_id = :owner AND operation = 'CREATE_ORDER' AND idempotency_key = 'pg-' || :k AND expires_at > clock_timestamp();
BEGIN;
INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, expires_at) VALUES (:owner, 'CREATE_ORDER', 'pg-' || :k, repeat('a', 64), 'PROCESSING', now() + 86400000::bigint * interval '1 millisecond') ON CONFLICT (owner_id, operation, idempotency_key) DO NOTHING RETURNING id AS record_id, (extract(epoch FROM expires_at) * 1000)::bigint AS expires_at_ms, set_config('lock_timeout', '0', true) AS lock_bound_lifted, nextval('purchase_order_id_seq'::text::regclass) AS order_id
\gset
WITH taken AS (UPDATE sku_inventory SET available = available - 1, updated_at = now() WHERE sku_id = :sku AND available >= 1 RETURNING sku_id), placed AS (INSERT INTO purchase_order (id, order_no, owner_id, sku_id, quantity, status) SELECT :order_id, 'PG-' || :k, :owner, taken.sku_id, 1, 'CREATED' FROM taken RETURNING id), event AS (INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, trace_parent) SELECT gen_random_uuid(), 'order', :order_id::text, 'order.created', ('{"orderId":' || :order_id || ',"orderNo":"PG-' || :k || '","status":"CREATED","skuId":' || :sku || ',"quantity":1}')::text::jsonb, NULL FROM placed), answer AS (UPDATE idempotency_record SET status = 'SUCCEEDED'::text, http_status = 201, response_json = '{"orderId":' || :order_id || ',"orderNo":"PG-' || :k || '","status":"CREATED","skuId":' || :sku || ',"quantity":1}', response_location = '/api/orders/' || :order_id, resource_id = :order_id, updated_at = now(), expires_at = CASE WHEN 'SUCCEEDED'::text = 'PROCESSING' THEN 'infinity' ELSE expires_at END WHERE id = :record_id AND status = 'PROCESSING' AND EXISTS (SELECT 1 FROM placed) RETURNING id) SELECT EXISTS (SELECT 1 FROM placed) AS placed, (SELECT count(*) FROM answer) AS answers_stored;
COMMIT;
