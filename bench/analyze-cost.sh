#!/usr/bin/env bash
# What autovacuum's ANALYZE of the three tables every order grows costs, before and after V10 and
# V11 (issue 45): a scratch database on PG_URL's server with the migrations up to V9, ROWS orders'
# orders, outbox events and idempotency records in the shapes the service writes
# (bench/ceiling.sql), then ANALYZE of each table ROUNDS times; then V10 and the same ANALYZEs, then
# V11 and the same again. Prints each ANALYZE's time.
#   PG_URL=postgresql://postgres@127.0.0.1:5432/postgres bench/analyze-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PG_URL=${PG_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
ROWS=${ROWS:-300000}
ROUNDS=${ROUNDS:-3}
db=analyze_cost_$$
psql -qX "$PG_URL" -c "CREATE DATABASE $db" >/dev/null
trap 'psql -qX "$PG_URL" -c "DROP DATABASE IF EXISTS $db" >/dev/null' EXIT
url="${PG_URL%/*}/$db"
for version in 1 2 3 4 5 6 7 8 9; do
    psql -qX -v ON_ERROR_STOP=1 "$url" -f src/main/resources/db/migration/V${version}__*.sql >/dev/null
done
psql -qX -v ON_ERROR_STOP=1 "$url" >/dev/null <<SQL
INSERT INTO purchase_order (order_no, owner_id, sku_id, quantity, status)
SELECT 'PG-' || md5(i::text), i % 500, 11000000 + i % 100, 1, 'CREATED'
  FROM generate_series(1, $ROWS) i;
INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, trace_parent, published_at)
SELECT gen_random_uuid(), 'order', i::text, 'order.created',
       ('{"orderId":' || i || ',"orderNo":"PG-' || md5(i::text) || '","status":"CREATED","skuId":' || (11000000 + i % 100)
        || ',"quantity":1}')::jsonb,
       '00-' || md5(i::text) || substr(md5((i + 1)::text), 1, 16) || '-01', CASE WHEN i % 50 <> 0 THEN now() END
  FROM generate_series(1, $ROWS) i;
INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, http_status, response_json,
                                response_location, resource_id, expires_at)
SELECT i % 500, 'CREATE_ORDER', gen_random_uuid()::text, md5(i::text) || md5((i + 1)::text), 'SUCCEEDED', 201,
       '{"orderId":' || i || ',"orderNo":"PG-' || md5(i::text) || '","status":"CREATED","skuId":' || (11000000 + i % 100)
       || ',"quantity":1}', '/api/orders/' || i, i, now() + interval '1 day'
  FROM generate_series(1, $ROWS) i;
VACUUM purchase_order, outbox_event, idempotency_record;
SQL
analyze_rounds() {
    for table in purchase_order outbox_event idempotency_record; do
        for round in $(seq 1 "$ROUNDS"); do
            ms=$(psql -qX "$url" -c '\timing on' -c "ANALYZE $table" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
            echo "$1 ANALYZE $table round $round: $ms ms"
        done
    done
}
analyze_rounds V9
psql -qX -v ON_ERROR_STOP=1 "$url" -f src/main/resources/db/migration/V10__*.sql >/dev/null
analyze_rounds V10
psql -qX -v ON_ERROR_STOP=1 "$url" -f src/main/resources/db/migration/V11__*.sql >/dev/null
analyze_rounds V11
