#!/usr/bin/env bash
# Protocol shapes (issue 17): what PostgreSQL spends per create for each way of writing one, with
# pgbench against the local PostgreSQL (127.0.0.1:5432, user postgres, trust), in a scratch
# database dropped at exit. Each shape writes the same rows (record, stock, order, outbox row):
#
#   ceiling          bench/ceiling.sql, exactly the service's SQL (4 statements, since 2026-12-05:
#                    the claim is the first write of the step's statement, the record inserted
#                    with its answer; the lookup draws the order's id)
#   claim-apart      the service's SQL before that (5: the claim a statement of its own, the
#                    step's writes and the record's answer, an update, in one statement)
#   split            the SQL before that (7: the order, its event and the answer apart)
#   write-once       the record inserted once at the end, under an advisory lock (8)
#   claim-apart-no-lookup  claim-apart without the read before the transaction (4; made from it;
#                    any shape with a lookup of its own line has a NAME-no-lookup)
#   ceiling-autocommit  the ceiling without BEGIN and COMMIT: the step's statement a transaction of
#                    its own (2; any shape with one statement between BEGIN and COMMIT has a
#                    NAME-autocommit; not in the default list)
#   (fused, the sketch the ceiling was built from, measured like it and was retired; it is
#   bench/shapes/fused.sql at b0c7de3)
#   floor            bench/floor.sql, everything in one statement (1; no design goes under it)
#
# After each window (RELAY=1), bench/shapes/relay.sql drains the outbox rows it left, alone, in
# batches of 100: its PostgreSQL CPU per row is added to the create's. Rounds
# alternate the order of the shapes, so drift on a shared machine falls on each of them.
# Every window runs on a fresh database (the service's migrations, 1,000 SKUs). PostgreSQL's CPU is
# read from /proc (every backend of the postmaster) around each window.
#
# Knobs: DURATION (seconds per run, 15), CONNECTIONS ("16 64"), ROUNDS (2), RELAY (1),
# SHAPES (all of the above), PG_BIN (/usr/lib/postgresql/15/bin). About 8 minutes as set.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-15}
CONNECTIONS=${CONNECTIONS:-16 64}
ROUNDS=${ROUNDS:-2}
RELAY=${RELAY:-1}
SHAPES=${SHAPES:-ceiling claim-apart split write-once claim-apart-no-lookup floor}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
DB="shapes_$(date +%s)_$$"
PSQL=(psql -X -q -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1)
OUT="bench/out/shapes-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
trap '"${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true' EXIT

script() {
    case $1 in
        ceiling) echo bench/ceiling.sql ;;
        floor) echo bench/floor.sql ;;
        *-no-lookup) without_lookup "${1%-no-lookup}" "$1" ;;
        *-autocommit) autocommit "${1%-autocommit}" "$1" ;;
        *) [ -f "bench/shapes/$1.sql" ] || { echo "unknown shape: $1" >&2; exit 2; }; echo "bench/shapes/$1.sql" ;;
    esac
}
# without_lookup BASE NAME: BASE's script without its read before the transaction (its one line
# starting with the lookup's SELECT), written to $OUT/NAME.sql, so the two never drift apart.
without_lookup() {
    local base file="$OUT/$2.sql"
    base=$(script "$1")
    [ "$(grep -c '^SELECT id, request_hash' "$base")" = 1 ] || { echo "$base has no single lookup to leave out" >&2; exit 2; }
    { echo "-- Shape \"$2\" (bench/shapes.sh): $base without its read before the transaction."
      grep -v '^SELECT id, request_hash' "$base"; } >"$file"
    echo "$file"
}
# autocommit BASE NAME: BASE's script without BEGIN and COMMIT, its step's statement a transaction of
# its own, written to $OUT/NAME.sql.
autocommit() {
    local base file="$OUT/$2.sql"
    base=$(script "$1")
    [ "$(grep -cxE 'BEGIN;|COMMIT;' "$base")" = 2 ] || { echo "$base has no single BEGIN and COMMIT to leave out" >&2; exit 2; }
    [ "$(sed -n '/^BEGIN;$/,/^COMMIT;$/p' "$base" | grep -cvE '^(BEGIN;|COMMIT;|--|\\g?set|[[:space:]]*$)')" = 1 ] \
        || { echo "$base has more than one statement between BEGIN and COMMIT" >&2; exit 2; }
    { echo "-- Shape \"$2\" (bench/shapes.sh): $base without BEGIN and COMMIT."
      grep -vxE 'BEGIN;|COMMIT;' "$base"; } >"$file"
    echo "$file"
}
statements() { grep -cvE '^(--|\\g?set|[[:space:]]*$)' "$(script "$1")"; }
for shape in $SHAPES; do script "$shape" >/dev/null; done

sql() { "${PSQL[@]}" -d "$DB" -At "$@"; }
# A fresh database for every window: autovacuum is off on this machine's PostgreSQL, and the dead
# row versions and index entries a window leaves would tax the windows after it.
fresh_db() {
    "${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
    for migration in $(ls src/main/resources/db/migration/V*.sql | sort -V); do
        sql -f "$migration"
    done
    sql -c "INSERT INTO sku_inventory (sku_id, available) SELECT g, 2000000000 FROM generate_series(1, 1000) g" \
        -c "ANALYZE" -c "CHECKPOINT"
}
fresh_db

CLK_TCK=$(getconf CLK_TCK)
PG_PID=$(head -n 1 "$(sql -c 'SHOW data_directory')/postmaster.pid")
# shellcheck source=bench/pg-cpu.sh
. bench/pg-cpu.sh

echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg); $(sql -c 'SELECT version()' | cut -d, -f1)"
echo "fsync=$(sql -c 'SHOW fsync') synchronous_commit=$(sql -c 'SHOW synchronous_commit'); $DURATION s per run, $ROUNDS rounds"
echo
echo "| round | shape | statements | connections | creates/s | PostgreSQL ms/create | rows relayed | relay PostgreSQL ms/row | ms/create with the relay |" | tee "$OUT/results.md"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|" | tee -a "$OUT/results.md"

# run ROUND SHAPE CONNECTIONS
run() {
    local file out before after creates left relayed relay_ticks=0 kids
    file=$(script "$2")
    fresh_db
    kids=$(pg_children)
    before=$(pg_ticks)
    out=$("$PG_BIN/pgbench" -n -M prepared -f "$file" -T "$DURATION" -c "$3" -j 2 -h 127.0.0.1 -U postgres "$DB" 2>&1) \
        || { echo "$out" >&2; exit 1; }
    pg_settle "$kids"
    after=$(pg_ticks)
    echo "$out" >"$OUT/pgbench-$1-$2-c$3.txt"
    creates=$(awk -F': ' '/number of transactions actually processed/ { split($2, a, "/"); print a[1] }' <<<"$out")
    left=$(sql -c "SELECT count(*) FROM outbox_event WHERE published_at IS NULL")
    relayed=0
    if ((RELAY)) && ((left > 0)); then
        # The relay drains what the window left, alone, in full batches (the last one partial).
        kids=$(pg_children)
        relay_ticks=$(pg_ticks)
        "$PG_BIN/pgbench" -n -M prepared -f bench/shapes/relay.sql -t $(((left + 99) / 100)) -c 1 -h 127.0.0.1 -U postgres \
            "$DB" >"$OUT/pgbench-$1-$2-c$3-relay.txt" 2>&1 || { cat "$OUT/pgbench-$1-$2-c$3-relay.txt" >&2; exit 1; }
        pg_settle "$kids"
        relay_ticks=$(($(pg_ticks) - relay_ticks))
        relayed=$((left - $(sql -c "SELECT count(*) FROM outbox_event WHERE published_at IS NULL")))
    fi
    awk -v r="$1" -v s="$2" -v st="$(statements "$2")" -v c="$3" -v n="$creates" -v d="$DURATION" \
        -v t=$((after - before)) -v rt="$relay_ticks" -v rn="$relayed" -v hz="$CLK_TCK" \
        'BEGIN { ms = t * 1000 / hz / n; rms = rn > 0 ? rt * 1000 / hz / rn : 0
                 printf "| %d | %s | %d | %d | %.0f | %.3f | %d | %.3f | %.3f |\n", r, s, st, c, n / d, ms, rn, rms, ms + rms }' \
        | tee -a "$OUT/results.md"
}

for round in $(seq 1 "$ROUNDS"); do
    order=$SHAPES
    ((round % 2)) || order=$(tr ' ' '\n' <<<"$SHAPES" | tac | tr '\n' ' ')
    for shape in $order; do
        for c in $CONNECTIONS; do run "$round" "$shape" "$c"; done
    done
done

echo
echo "Means over the rounds:"
echo
{
    echo "| shape | statements | connections | creates/s | PostgreSQL ms/create | with the relay |"
    echo "|---|---:|---:|---:|---:|---:|"
    awk -F'|' 'NR > 2 && $2 + 0 > 0 { k = $3 "|" $4 "|" $5; r[k] += $6; ms[k] += $7; all[k] += $10; n[k]++
                                      if (!(k in seen)) { seen[k] = 1; keys[++m] = k } }
        END { for (i = 1; i <= m; i++) { k = keys[i]; split(k, f, "|")
              printf "| %s | %d | %d | %.0f | %.3f | %.3f |\n", f[1], f[2], f[3], r[k] / n[k], ms[k] / n[k], all[k] / n[k] } }' \
        "$OUT/results.md" | sed -E 's/\|  +/| /g; s/ +\|/ |/g'
} | tee "$OUT/means.md"
echo "(results in $OUT)"
