-- The ceiling: exactly the SQL one order creation runs (bench/run.sh runs this file with
-- pgbench -n -M prepared -f bench/ceiling.sql -T DURATION -c 16|64 -j 2). Keep it in step with
-- IdempotencyRepository (FIND_LIVE, CLAIM, COMPLETE) and OrderRepository (INSERT_TAKING_STOCK).
-- The service sets lock_timeout per connection (a startup parameter), so only the reset after
-- the claim is a statement here. The service's final UPDATE is by primary key (WHERE id = $1); pgbench cannot carry the
-- RETURNING id over, so it uses the unique scope instead. Keys are 'pg-<k>' and order numbers
-- 'PG-<k>', which the correctness checks of run.sh tell apart from the service's.
\set k random(1, 9000000000000000)
\set owner random(1, 1000000)
\set sku random(1, 1000)
SELECT id, request_hash, status FROM idempotency_record WHERE owner_id = :owner AND operation = 'CREATE_ORDER' AND idempotency_key = 'pg-' || :k AND expires_at > now();
BEGIN;
INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, expires_at) VALUES (:owner, 'CREATE_ORDER', 'pg-' || :k, repeat('a', 64), 'PROCESSING', now() + 86400000 * interval '1 millisecond') ON CONFLICT (owner_id, operation, idempotency_key) DO UPDATE SET status = 'PROCESSING' WHERE idempotency_record.expires_at <= now() RETURNING id;
SET LOCAL lock_timeout = 0;
WITH taken AS (UPDATE sku_inventory SET available = available - 1, updated_at = now() WHERE sku_id = :sku AND available >= 1 RETURNING sku_id) INSERT INTO purchase_order (order_no, owner_id, sku_id, quantity, status) SELECT 'PG-' || :k, :owner, taken.sku_id, 1, 'CREATED' FROM taken RETURNING id, order_no, status, sku_id, quantity;
UPDATE idempotency_record SET status = 'SUCCEEDED', http_status = 201, response_json = '{"orderId":1,"orderNo":"x","status":"CREATED","skuId":1,"quantity":1}', response_location = '/api/orders/1', resource_id = 1, updated_at = now() WHERE owner_id = :owner AND operation = 'CREATE_ORDER' AND idempotency_key = 'pg-' || :k AND status = 'PROCESSING';
COMMIT;
