-- Shape "split" (bench/shapes.sh): the service's SQL until 2026-12-04, 7 statements: the lookup,
-- BEGIN, the claim, the stock-and-order CTE, the outbox insert, the record's answer, COMMIT. Since
-- then the last three are one statement (bench/ceiling.sql).
\set k random(1, 9000000000000000)
\set owner random(1, 1000000)
\set sku random(1, 1000)
SELECT id, request_hash, status, http_status, response_json, response_location, resource_id, CASE WHEN expires_at = 'infinity' THEN NULL ELSE (extract(epoch FROM expires_at) * 1000)::bigint END AS expires_at_ms FROM idempotency_record WHERE owner_id = :owner AND operation = 'CREATE_ORDER' AND idempotency_key = 'pg-' || :k AND expires_at > clock_timestamp();
BEGIN;
INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, expires_at) VALUES (:owner, 'CREATE_ORDER', 'pg-' || :k, repeat('a', 64), 'PROCESSING', now() + 86400000::bigint * interval '1 millisecond') ON CONFLICT (owner_id, operation, idempotency_key) DO NOTHING RETURNING id, (extract(epoch FROM expires_at) * 1000)::bigint AS expires_at_ms, set_config('lock_timeout', '0', true) AS lock_bound_lifted;
WITH taken AS (UPDATE sku_inventory SET available = available - 1, updated_at = now() WHERE sku_id = :sku AND available >= 1 RETURNING sku_id) INSERT INTO purchase_order (order_no, owner_id, sku_id, quantity, status) SELECT 'PG-' || :k, :owner, taken.sku_id, 1, 'CREATED' FROM taken RETURNING id, order_no, status, sku_id, quantity;
INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, trace_parent) VALUES (gen_random_uuid(), 'order', :k::text, 'order.created', '{"orderId":1234567,"orderNo":"ORD-20261203-ABCDEF123456","status":"CREATED","skuId":17,"quantity":1}'::text::jsonb, NULL);
UPDATE idempotency_record SET status = 'SUCCEEDED', http_status = 201, response_json = '{"orderId":1234567,"orderNo":"ORD-20261203-ABCDEF123456","status":"CREATED","skuId":17,"quantity":1}', response_location = '/api/orders/1234567', resource_id = :k, updated_at = now(), expires_at = CASE WHEN 'SUCCEEDED' = 'PROCESSING' THEN 'infinity' ELSE expires_at END WHERE owner_id = :owner AND operation = 'CREATE_ORDER' AND idempotency_key = 'pg-' || :k AND status = 'PROCESSING';
COMMIT;
