-- Shape "write-once" (bench/shapes.sh): the record written once, in its final state, at the end;
-- a transaction-level advisory lock on the key's scope takes the claim's place (duplicates queue
-- on it as they queue on the unique index today), and the lookup is repeated under it, since a
-- winner may have committed while this waited. 8 statements: the lock and the re-read take the
-- claim's place, the final INSERT the UPDATE's.
\set k random(1, 9000000000000000)
\set owner random(1, 1000000)
\set sku random(1, 1000)
SELECT id, request_hash, status, http_status, response_json, response_location, resource_id, CASE WHEN expires_at = 'infinity' THEN NULL ELSE (extract(epoch FROM expires_at) * 1000)::bigint END AS expires_at_ms FROM idempotency_record WHERE owner_id = :owner AND operation = 'CREATE_ORDER' AND idempotency_key = 'wo-' || :k AND expires_at > clock_timestamp();
BEGIN;
SELECT pg_advisory_xact_lock(hashtextextended(:owner || '/CREATE_ORDER/wo-' || :k, 0)), nextval('idempotency_record_id_seq') AS id, set_config('lock_timeout', '0', true) AS lock_bound_lifted;
SELECT id, request_hash, status, http_status, response_json, response_location, resource_id, CASE WHEN expires_at = 'infinity' THEN NULL ELSE (extract(epoch FROM expires_at) * 1000)::bigint END AS expires_at_ms FROM idempotency_record WHERE owner_id = :owner AND operation = 'CREATE_ORDER' AND idempotency_key = 'wo-' || :k AND expires_at > clock_timestamp();
WITH taken AS (UPDATE sku_inventory SET available = available - 1, updated_at = now() WHERE sku_id = :sku AND available >= 1 RETURNING sku_id) INSERT INTO purchase_order (order_no, owner_id, sku_id, quantity, status) SELECT 'WO-' || :k, :owner, taken.sku_id, 1, 'CREATED' FROM taken RETURNING id, order_no, status, sku_id, quantity;
INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, trace_parent) VALUES (gen_random_uuid(), 'order', :k::text, 'order.created', '{"orderId":1234567,"orderNo":"ORD-20261203-ABCDEF123456","status":"CREATED","skuId":17,"quantity":1}'::text::jsonb, NULL);
INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, http_status, response_json, response_location, resource_id, expires_at) VALUES (:owner, 'CREATE_ORDER', 'wo-' || :k, repeat('a', 64), 'SUCCEEDED', 201, '{"orderId":1234567,"orderNo":"ORD-20261203-ABCDEF123456","status":"CREATED","skuId":17,"quantity":1}', '/api/orders/1234567', :k, now() + 86400000::bigint * interval '1 millisecond');
COMMIT;
