-- Shape "fused" (bench/shapes.sh): the lookup, then BEGIN, the claim, and one statement that
-- takes the stock, inserts the order and its outbox row and stores the answer on the record,
-- then COMMIT. 5 statements.
\set k random(1, 9000000000000000)
\set owner random(1, 1000000)
\set sku random(1, 1000)
SELECT id, request_hash, status, http_status, response_json, response_location, resource_id, CASE WHEN expires_at = 'infinity' THEN NULL ELSE (extract(epoch FROM expires_at) * 1000)::bigint END AS expires_at_ms FROM idempotency_record WHERE owner_id = :owner AND operation = 'CREATE_ORDER' AND idempotency_key = 'fu-' || :k AND expires_at > clock_timestamp();
BEGIN;
INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, expires_at) VALUES (:owner, 'CREATE_ORDER', 'fu-' || :k, repeat('a', 64), 'PROCESSING', now() + 86400000::bigint * interval '1 millisecond') ON CONFLICT (owner_id, operation, idempotency_key) DO NOTHING RETURNING id, (extract(epoch FROM expires_at) * 1000)::bigint AS expires_at_ms, set_config('lock_timeout', '0', true) AS lock_bound_lifted;
WITH taken AS (UPDATE sku_inventory SET available = available - 1, updated_at = now() WHERE sku_id = :sku AND available >= 1 RETURNING sku_id), placed AS (INSERT INTO purchase_order (order_no, owner_id, sku_id, quantity, status) SELECT 'FU-' || :k, :owner, taken.sku_id, 1, 'CREATED' FROM taken RETURNING id), event AS (INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, trace_parent) SELECT gen_random_uuid(), 'order', placed.id::text, 'order.created', '{"orderId":1234567,"orderNo":"ORD-20261203-ABCDEF123456","status":"CREATED","skuId":17,"quantity":1}'::text::jsonb, NULL FROM placed) UPDATE idempotency_record SET status = 'SUCCEEDED', http_status = 201, response_json = '{"orderId":1234567,"orderNo":"ORD-20261203-ABCDEF123456","status":"CREATED","skuId":17,"quantity":1}', response_location = '/api/orders/1234567', resource_id = (SELECT id FROM placed), updated_at = now() WHERE owner_id = :owner AND operation = 'CREATE_ORDER' AND idempotency_key = 'fu-' || :k AND status = 'PROCESSING';
COMMIT;
