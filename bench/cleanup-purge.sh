#!/usr/bin/env bash
# bench/cleanup-purge.sh [PG_URL]: the idempotency cleanup's purge of 100k expired records, with the
# statement before and after "records live as long as their work" (V6: running work has
# expires_at = infinity, and the purge names the finished statuses), on a scratch database with
# the real schema, beside 100k live records and 20k records of running work.
# Prints one line per variant: rows deleted, batches, milliseconds, rows/s; and the plan of a batch.
set -euo pipefail
url=${1:-postgresql://postgres@127.0.0.1:5432/postgres}
db="purge_bench_$$"
here=$(cd "$(dirname "$0")/.." && pwd)
psql -q "$url" -c "CREATE DATABASE $db"
trap 'psql -q "$url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null' EXIT
target="${url%/*}/$db"
for migration in $(ls "$here"/src/main/resources/db/migration/V*.sql | sort -V); do
    psql -q -v ON_ERROR_STOP=1 "$target" -f "$migration" >/dev/null
done

fill() {
    psql -q -v ON_ERROR_STOP=1 "$target" <<'SQL'
TRUNCATE idempotency_record;
INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, http_status,
                                response_json, resource_id, expires_at)
SELECT g % 5000, 'CREATE_ORDER', 'expired-' || g, repeat('0', 64), 'SUCCEEDED', 201, '{"orderId": 1}', g,
       now() - interval '1 hour' + g * interval '1 millisecond'
  FROM generate_series(1, 100000) g;
INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, http_status,
                                response_json, resource_id, expires_at)
SELECT g % 5000, 'CREATE_ORDER', 'live-' || g, repeat('0', 64), 'SUCCEEDED', 201, '{"orderId": 1}', g,
       now() + interval '1 hour' + g * interval '1 millisecond'
  FROM generate_series(1, 100000) g;
INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, http_status,
                                response_json, resource_id, expires_at)
SELECT g % 5000, 'PAY_ORDER', 'running-' || g, repeat('0', 64), 'PROCESSING', 202, '{"paymentId": 1}', g,
       'infinity'
  FROM generate_series(1, 20000) g;
VACUUM ANALYZE idempotency_record;
SQL
}

purge() { # $1 name, $2 the batch statement: batches until none is left, timed by the server
    fill
    psql -qtA -v ON_ERROR_STOP=1 "$target" <<SQL | sed "s/^/$1 /"
DO \$\$
DECLARE n int; total int := 0; batches int := 0; started timestamptz := clock_timestamp(); ms numeric;
BEGIN
    LOOP
        WITH gone AS ($2 RETURNING 1) SELECT count(*) INTO n FROM gone;
        batches := batches + 1;
        EXIT WHEN n = 0;
        total := total + n;
    END LOOP;
    ms := round(extract(epoch FROM clock_timestamp() - started) * 1000);
    RAISE NOTICE 'rows=% batches=% ms=% rows_per_s=%', total, batches, ms, round(total * 1000 / greatest(ms, 1));
END
\$\$;
SELECT 'left: running=' || count(*) FILTER (WHERE expires_at = 'infinity')
       || ' live=' || count(*) FILTER (WHERE idempotency_key LIKE 'live-%') FROM idempotency_record;
SQL
}

before="DELETE FROM idempotency_record WHERE id IN (SELECT id FROM idempotency_record WHERE expires_at <= now()
        ORDER BY expires_at LIMIT 1000 FOR UPDATE SKIP LOCKED)"
after="DELETE FROM idempotency_record WHERE id IN (SELECT id FROM idempotency_record WHERE expires_at <= now()
        AND status IN ('SUCCEEDED', 'FAILED_FINAL') ORDER BY expires_at LIMIT 1000 FOR UPDATE SKIP LOCKED)"
for round in 1 2; do
    purge before "$before"
    purge after "$after"
done
fill
echo "plan of one batch (after):"
psql -qtA "$target" -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $after" | sed 's/^/  /'
