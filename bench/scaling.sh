#!/usr/bin/env bash
# The measurements behind docs/SCALING.md, against the local PostgreSQL (127.0.0.1:5432, user
# postgres, trust) in a scratch database that is dropped at exit. About a minute of wall time.
#
#   1. commit cost: pg_test_fsync; bench/ceiling.sql (the SQL of one order) with pgbench at 1 and
#      16 connections as configured, then at 16 with commit_delay = half a flush and with
#      synchronous_commit off, both for pgbench's sessions only.
#   2. cleanup cost: ROWS expired records deleted the way the service does (1000-row batches,
#      FOR UPDATE SKIP LOCKED) plus the VACUUM that reclaims them, against DETACH + DROP of a
#      partition holding the same rows; time and WAL of each.
#   3. what partitioning does to the unique scope: the errors and the duplicate PostgreSQL allows,
#      and lock_timeout bounding a wait on a transaction-level advisory lock.
#
# Knobs: ROWS (default 200000), DURATION (pgbench seconds per run, default 10).
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-200000}
DURATION=${DURATION:-10}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
DB="scaling_$(date +%s)_$$"
PSQL=(psql -X -q -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1)
TMP=$(mktemp -d)
trap '"${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT

"${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB"
sql() { "${PSQL[@]}" -d "$DB" -At "$@"; }

echo "== machine"
echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
sql -c "SELECT version()"
for setting in fsync synchronous_commit full_page_writes wal_sync_method commit_delay autovacuum shared_buffers; do
    echo "$setting = $(sql -c "SHOW $setting")"
done

for migration in src/main/resources/db/migration/V*.sql; do
    sql -f "$migration"
done
sql -c "INSERT INTO sku_inventory (sku_id, available) SELECT g, 2000000000 FROM generate_series(1, 1000) g"

echo
echo "== 1. commit cost: bench/ceiling.sql, $DURATION s per run"
# Cluster-wide WAL position and flush count, all databases' commits, this database's commits.
counters() {
    sql -F ' ' -c "SELECT pg_current_wal_insert_lsn(), (SELECT wal_sync FROM pg_stat_wal),
                          (SELECT sum(xact_commit) FROM pg_stat_database),
                          (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())"
}
run_pgbench() { # label, connections, extra PGOPTIONS
    local out before after txns
    before=($(counters))
    out=$(PGOPTIONS="${3:-}" "$PG_BIN/pgbench" -n -M prepared -f bench/ceiling.sql -T "$DURATION" -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" \
        -h 127.0.0.1 -U postgres "$DB" 2>&1)
    sleep 1 # let the WAL writer report its flushes
    after=($(counters))
    txns=$(awk '/number of transactions actually processed/ {print $NF}' <<<"$out")
    printf '%-28s %s | %s | %s txns, WAL %s B/txn, %s commits per WAL flush, %s commits in other databases meanwhile\n' \
        "$1" "$(grep -E '^tps' <<<"$out" | sed 's/ (without initial connection time)//')" \
        "$(grep -E '^latency average' <<<"$out")" "$txns" \
        "$(sql -c "SELECT round(pg_wal_lsn_diff('${after[0]}', '${before[0]}') / $txns)")" \
        "$(awk -v t="$txns" -v s=$(( after[1] - before[1] )) 'BEGIN { printf "%.1f", s ? t / s : 0 }')" \
        "$(( after[2] - before[2] - (after[3] - before[3]) ))"
}
echo "pg_test_fsync (fdatasync, the server's wal_sync_method, one 8 kB write per flush):"
(cd "$TMP" && "$PG_BIN/pg_test_fsync" -s 2 >"$TMP/fsync.out" 2>&1)
fsync_line=$(grep -E -m1 '^\s+fdatasync\s' "$TMP/fsync.out")
echo "$fsync_line"
# The PostgreSQL manual's starting point for commit_delay: half the time of one flush.
commit_delay=$(awk '{ printf "%d", $(NF-1) / 2 }' <<<"$fsync_line")
sql -c "CHECKPOINT"
run_pgbench "c1  synchronous_commit=on" 1
sql -c "CHECKPOINT"
run_pgbench "c16 synchronous_commit=on" 16
sql -c "CHECKPOINT"
run_pgbench "c16 commit_delay=${commit_delay}us" 16 "-c commit_delay=$commit_delay"
sql -c "CHECKPOINT"
run_pgbench "c16 synchronous_commit=off" 16 "-c synchronous_commit=off"

echo
echo "== 2. cleanup: $ROWS expired records"
fill() { # table
    sql -c "INSERT INTO $1 (owner_id, operation, idempotency_key, request_hash, status, http_status,
                            response_json, response_location, resource_id, created_at, updated_at, expires_at)
            SELECT g % 100000 + 1, 'CREATE_ORDER', 'k-' || md5(g::text), repeat('a', 64), 'SUCCEEDED', 201,
                   jsonb_build_object('orderId', g, 'orderNo', 'ORD-' || upper(md5(g::text)), 'status', 'CREATED',
                                      'skuId', 10001, 'quantity', 1),
                   '/api/orders/' || g, g, now() - interval '25 hours', now() - interval '25 hours',
                   now() - interval '1 hour'
              FROM generate_series(1, $ROWS) g"
}
wal() { sql -c "SELECT pg_current_wal_insert_lsn()"; }
wal_since() { sql -c "SELECT pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$1'))"; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

sql -c "TRUNCATE idempotency_record"
fill idempotency_record
sql -c "VACUUM ANALYZE idempotency_record"
echo "table + indexes before: $(sql -c "SELECT pg_size_pretty(pg_total_relation_size('idempotency_record'))")"
# The service's DELETE_EXPIRED_BATCH, one autocommitted statement per batch, as the job runs it.
echo 'DELETE FROM idempotency_record WHERE id IN (SELECT id FROM idempotency_record WHERE expires_at <= now() ORDER BY expires_at LIMIT 1000 FOR UPDATE SKIP LOCKED);' \
    > "$TMP/delete.sql"
sql -c "CHECKPOINT"
lsn=$(wal); start=$(date +%s%N)
"$PG_BIN/pgbench" -n -f "$TMP/delete.sql" -t $(( ROWS / 1000 )) -c 1 -h 127.0.0.1 -U postgres "$DB" >"$TMP/delete.out" 2>&1
echo "batched DELETE: $(ms_since "$start") ms, WAL $(wal_since "$lsn"), rows left $(sql -c "SELECT count(*) FROM idempotency_record"), $(grep -E '^latency average' "$TMP/delete.out") per 1000-row batch"
echo "table + indexes after DELETE: $(sql -c "SELECT pg_size_pretty(pg_total_relation_size('idempotency_record'))")"
lsn=$(wal); start=$(date +%s%N)
sql -c "VACUUM idempotency_record"
echo "VACUUM after it: $(ms_since "$start") ms, WAL $(wal_since "$lsn")"

sql <<'SQL'
CREATE TABLE idempotency_record_p (LIKE idempotency_record INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (created_at);
ALTER TABLE idempotency_record_p ADD UNIQUE (owner_id, operation, idempotency_key, created_at);
CREATE INDEX ON idempotency_record_p (expires_at);
SQL
day_before=$(sql -c "SELECT date_trunc('day', now() - interval '25 hours')")
sql -c "CREATE TABLE idempotency_record_p_old PARTITION OF idempotency_record_p
            FOR VALUES FROM ('$day_before'::timestamptz - interval '1 day') TO ('$day_before'::timestamptz + interval '1 day')"
fill idempotency_record_p_old
sql -c "VACUUM ANALYZE idempotency_record_p_old"
echo "partition + indexes: $(sql -c "SELECT pg_size_pretty(pg_total_relation_size('idempotency_record_p_old'))")"
sql -c "CHECKPOINT"
lsn=$(wal); start=$(date +%s%N)
sql -c "ALTER TABLE idempotency_record_p DETACH PARTITION idempotency_record_p_old" -c "DROP TABLE idempotency_record_p_old"
echo "DETACH + DROP PARTITION: $(ms_since "$start") ms (two psql statements, connection included), WAL $(wal_since "$lsn")"

echo
echo "== 3. partitioning and the unique scope"
sql <<'SQL' 2>&1 | sed 's/^/  /' || true
CREATE TABLE by_time (owner_id bigint, operation text, idempotency_key text, created_at timestamptz)
    PARTITION BY RANGE (created_at);
CREATE TABLE by_time_d1 PARTITION OF by_time FOR VALUES FROM ('2026-01-01') TO ('2026-01-02');
CREATE TABLE by_time_d2 PARTITION OF by_time FOR VALUES FROM ('2026-01-02') TO ('2026-01-03');
ALTER TABLE by_time ADD UNIQUE (owner_id, operation, idempotency_key);
SQL
sql <<'SQL' 2>&1 | sed 's/^/  /' || true
ALTER TABLE by_time ADD UNIQUE (owner_id, operation, idempotency_key, created_at);
-- The same key, claimed just before and just after midnight: both rows are accepted.
INSERT INTO by_time VALUES (7, 'CREATE_ORDER', 'key-1', '2026-01-01 23:59:59.9'),
                           (7, 'CREATE_ORDER', 'key-1', '2026-01-02 00:00:00.1');
SELECT 'rows for one key: ' || count(*) FROM by_time WHERE idempotency_key = 'key-1';
-- The service's claim names the scope without the partition key.
INSERT INTO by_time VALUES (7, 'CREATE_ORDER', 'key-2', '2026-01-01 12:00')
    ON CONFLICT (owner_id, operation, idempotency_key) DO NOTHING;
SQL
sql <<'SQL' 2>&1 | sed 's/^/  /' || true
-- Partitioned by expiry, the takeover of an expired key moves its row to a later partition.
CREATE TABLE by_expiry (owner_id bigint, operation text, idempotency_key text, expires_at timestamptz,
                        UNIQUE (owner_id, operation, idempotency_key, expires_at)) PARTITION BY RANGE (expires_at);
CREATE TABLE by_expiry_d1 PARTITION OF by_expiry FOR VALUES FROM ('2026-01-01') TO ('2026-01-02');
CREATE TABLE by_expiry_d2 PARTITION OF by_expiry FOR VALUES FROM ('2026-01-02') TO ('2026-01-03');
INSERT INTO by_expiry VALUES (7, 'CREATE_ORDER', 'key-3', '2026-01-01 12:00');
INSERT INTO by_expiry VALUES (7, 'CREATE_ORDER', 'key-3', '2026-01-01 12:00')
    ON CONFLICT (owner_id, operation, idempotency_key, expires_at) DO UPDATE SET expires_at = '2026-01-02 12:00';
SQL
sql -c "SELECT 'advisory lock wait bounded by lock_timeout:'"
lock_key="hashtextextended('7/CREATE_ORDER/key-4', 0)"
("${PSQL[@]}" -d "$DB" -c "BEGIN" -c "SELECT pg_advisory_xact_lock($lock_key)" -c "SELECT pg_sleep(2)" -c "COMMIT" >/dev/null) &
holder=$!
sleep 0.5
sql -c "SET lock_timeout = '200ms'" -c "SELECT pg_advisory_xact_lock($lock_key)" 2>&1 | sed 's/^/  /' || true
wait "$holder"
