-- The floor: the least PostgreSQL work a create can be, to tell what the ceiling (ceiling.sql,
-- exactly our SQL) and the service cost above it. One statement, one round trip, no read and
-- no update: the idempotency record written once in its final state, the stock taken, the order
-- and its outbox row inserted, committed (autocommit) with one WAL flush. It gives up what the
-- protocol needs (the claim before the step, so a duplicate waits instead of doing the work
-- twice; the response, which holds the new order's id) and is not a design we could run; it is
-- the bound under any design that writes these four rows with these indexes. bench/run.sh runs
-- it beside the ceiling (pgbench -n -M prepared -f bench/floor.sql); keys are 'pg-fl-<k>' and order
-- numbers 'PG-FL-<k>', which run.sh's checks count with the ceiling's.
\set k random(1, 9000000000000000)
\set owner random(1, 1000000)
\set sku random(1, 1000)
WITH record AS (INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, http_status, response_json, response_location, resource_id, expires_at) VALUES (:owner, 'CREATE_ORDER', 'pg-fl-' || :k, repeat('a', 64), 'SUCCEEDED', 201, '{"orderId":1234567,"orderNo":"ORD-20261203-ABCDEF123456","status":"CREATED","skuId":17,"quantity":1}', '/api/orders/1234567', :k, now() + interval '24 hours') RETURNING id), taken AS (UPDATE sku_inventory SET available = available - 1, updated_at = now() WHERE sku_id = :sku AND available >= 1 RETURNING sku_id), placed AS (INSERT INTO purchase_order (order_no, owner_id, sku_id, quantity, status) SELECT 'PG-FL-' || :k, :owner, taken.sku_id, 1, 'CREATED' FROM taken, record RETURNING id) INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload) SELECT gen_random_uuid(), 'order', placed.id::text, 'order.created', '{"orderId":1234567,"orderNo":"ORD-20261203-ABCDEF123456","status":"CREATED","skuId":17,"quantity":1}'::jsonb FROM placed;
