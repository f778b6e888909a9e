-- Shape "no-lookup" (bench/shapes.sh): the ceiling's statements without the read before the
-- transaction; the claim answers instead (a duplicate would read the winner in the transaction).
-- 6 statements.
\set k random(1, 9000000000000000)
\set owner random(1, 1000000)
\set sku random(1, 1000)
BEGIN;
INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, expires_at) VALUES (:owner, 'CREATE_ORDER', 'nl-' || :k, repeat('a', 64), 'PROCESSING', now() + 86400000::bigint * interval '1 millisecond') ON CONFLICT (owner_id, operation, idempotency_key) DO NOTHING RETURNING id, (extract(epoch FROM expires_at) * 1000)::bigint AS expires_at_ms, set_config('lock_timeout', '0', true) AS lock_bound_lifted;
WITH taken AS (UPDATE sku_inventory SET available = available - 1, updated_at = now() WHERE sku_id = :sku AND available >= 1 RETURNING sku_id) INSERT INTO purchase_order (order_no, owner_id, sku_id, quantity, status) SELECT 'NL-' || :k, :owner, taken.sku_id, 1, 'CREATED' FROM taken RETURNING id, order_no, status, sku_id, quantity;
INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, trace_parent) VALUES (gen_random_uuid(), 'order', :k::text, 'order.created', '{"orderId":1234567,"orderNo":"ORD-20261203-ABCDEF123456","status":"CREATED","skuId":17,"quantity":1}'::text::jsonb, NULL);
UPDATE idempotency_record SET status = 'SUCCEEDED', http_status = 201, response_json = '{"orderId":1234567,"orderNo":"ORD-20261203-ABCDEF123456","status":"CREATED","skuId":17,"quantity":1}', response_location = '/api/orders/1234567', resource_id = :k, updated_at = now(), expires_at = CASE WHEN 'SUCCEEDED' = 'PROCESSING' THEN 'infinity' ELSE expires_at END WHERE owner_id = :owner AND operation = 'CREATE_ORDER' AND idempotency_key = 'nl-' || :k AND status = 'PROCESSING';
COMMIT;
