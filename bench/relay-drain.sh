#!/usr/bin/env bash
# What relaying one event costs (issue 17), with nothing else running in the service: the packaged
# service, idle but for its relay, drains an outbox that one SQL statement fills with EVENTS rows
# (each of its own order, with a stored traceparent, as creates leave them). Per round: how long the
# drain took, events/s, and the CPU per event of the service and of PostgreSQL, from /proc. The
# PostgreSQL figure leaves out the filling statement: the same statement is run once and rolled back
# just before, and its cost is subtracted. It still holds the script's own poll for the last
# unpublished row (every 0.1 s), and it grows round by round as the published rows pile up (the
# retention keeps them; bench/README.md, "the relay's batch in one call"): compare
# like rounds of two builds.
#
#   ./mvnw -B package -DskipTests && bench/relay-drain.sh
#
# Knobs (environment): JAVA_HOME, JAVA_OPTS (a JFR recording, say), APP (target/quarkus-app; another build's to compare), PG_URL
# (postgresql://postgres@127.0.0.1:5432; database orders_relay_drain is created and dropped),
# EVENTS (100000), ROUNDS (3, after one warm-up round of the same size). The broker is the service's
# default (RabbitMQ on localhost:5672) unless RABBITMQ_HOST/RABBITMQ_PORT say otherwise. Writes
# bench/out/relay-drain-<time>/ (service.log, results.md). Run it on a quiet machine, alone.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
APP=${APP:-$(dirname "$BENCH_DIR")/target/quarkus-app}
PG_URL=${PG_URL:-postgresql://postgres@127.0.0.1:5432}
EVENTS=${EVENTS:-100000}
ROUNDS=${ROUNDS:-3}
DB=orders_relay_drain
OUT="$BENCH_DIR/out/relay-drain-$(date +%Y%m%d-%H%M%S)"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
PID=""
TMP=$(mktemp -d)

die() { echo "ERROR: $*" >&2; exit 1; }
log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*"; }
[ -f "$APP/quarkus-run.jar" ] || die "no $APP/quarkus-run.jar: ./mvnw -B package -DskipTests first"
mkdir -p "$OUT"
trap 'rm -rf "$TMP"; [ -z "$PID" ] || { kill "$PID"; wait "$PID" 2>/dev/null || true; }; psql -q "$PG_URL/postgres" -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true' EXIT

# shellcheck source=bench/pg-cpu.sh
. "$BENCH_DIR/pg-cpu.sh"
pg_find_postmaster "$PG_URL/postgres"
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$PID/stat"; }
# shellcheck source=bench/service.sh
. "$BENCH_DIR/service.sh"
# shellcheck source=bench/jwt.sh
. "$BENCH_DIR/jwt.sh"
new_key_pair # the service needs a verification key to start; no request is made
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$PG_URL/$DB" -c "$1"; }

# The rows of round $1: one order each, the payload and traceparent shaped like a create's.
fill() {
    cat <<SQL
INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, trace_parent)
SELECT gen_random_uuid(), 'order', '$1-' || g, 'order.created',
       jsonb_build_object('orderId', '$1-' || g, 'ownerId', '7', 'skuId', 1 + g % 1000, 'quantity', 1,
                          'status', 'CREATED', 'createdAt', now()),
       '00-' || md5(g::text || '$1') || '-' || left(md5('$1' || g::text), 16) || '-01'
  FROM generate_series(1, $EVENTS) g
SQL
}

psql -q "$PG_URL/postgres" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
(cd "$APP" && exec env QUARKUS_DATASOURCE_REACTIVE_URL="$PG_URL/$DB" \
    MP_JWT_VERIFY_PUBLICKEY_LOCATION="$TMP/pub.pem" MP_JWT_VERIFY_ISSUER=https://bench.local/relay-drain QUARKUS_HTTP_PORT="$PORT" QUARKUS_HTTP_HOST=127.0.0.1 \
    "$JAVA_HOME/bin/java" ${JAVA_OPTS:-} -jar quarkus-run.jar >"$OUT/service.log" 2>&1) &
PID=$!
await_ready "$PID" "$PORT" "$OUT/service.log"
log "service $APP ready; $EVENTS events per round, $ROUNDS rounds after a warm-up"

{
    echo "| round | events | seconds | events/s | service CPU µs/event | PostgreSQL CPU µs/event |"
    echo "|---|---:|---:|---:|---:|---:|"
} | tee "$OUT/results.md"
for round in $(seq 0 "$ROUNDS"); do
    sql "VACUUM ANALYZE outbox_event" >/dev/null
    p_fill0=$(pg_ticks)
    sql "BEGIN; $(fill "r$round"); ROLLBACK;" >/dev/null
    p_fill=$(( $(pg_ticks) - p_fill0 ))
    t0=$(ticks); p0=$(pg_ticks); s0=$(date +%s.%N)
    sql "$(fill "r$round")" >/dev/null
    until [ "$(sql "SELECT NOT EXISTS (SELECT 1 FROM outbox_event WHERE published_at IS NULL)")" = t ]; do sleep 0.1; done
    s1=$(date +%s.%N); t1=$(ticks); p1=$(pg_ticks)
    label=$round; [ "$round" = 0 ] && label="warm-up"
    awk -v r="$label" -v n="$EVENTS" -v s0="$s0" -v s1="$s1" -v t=$((t1 - t0)) -v p=$((p1 - p0 - p_fill)) \
        -v hz="$(getconf CLK_TCK)" \
        'BEGIN { s = s1 - s0; printf "| %s | %d | %.1f | %.0f | %.1f | %.1f |\n", r, n, s, n / s, t * 1e6 / hz / n, p * 1e6 / hz / n }' \
        | tee -a "$OUT/results.md"
done
echo "relay runs with unconfirmed events: $(grep -c 'not confirmed by the broker' "$OUT/service.log" || true)"
