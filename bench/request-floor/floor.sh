#!/usr/bin/env bash
# The request floor (issue 17): what a create and a replay cost on the service's stack with none of
# the service's own work (bench/request-floor: Quarkus REST with Jackson and the Vert.x PostgreSQL
# client; one statement per request), measured one after the other with the packaged service under
# the same wrk scripts (bench/lua), each on a fresh database of its own. Per target and window:
# requests/s, p50/p99, the CPU per request of the Java process and of PostgreSQL, from /proc, and
# the machine's idle share.
#
#   ./mvnw -B package -DskipTests && bench/request-floor/floor.sh
#
# Targets (TARGETS, default "floor floor-one-loop service-bare service-no-relay service"), each a fresh process:
#   floor             the floor application (built here with the root's mvnw), on Quarkus's
#                     default number of event loops
#   floor-one-loop    the same on one event loop, as the service runs (its p99 is the like-for-like one)
#   service           target/quarkus-app as deployed (relay on, tracing without a collector)
#   service-no-relay  the same with OUTBOX_RELAY_ENABLED=false: events stay in the outbox, so the
#                     difference to "service" is what relaying the events costs (process and PostgreSQL)
#   service-bare      also without the OpenTelemetry SDK (QUARKUS_OTEL_SDK_DISABLED=true) and the
#                     request log line (its package at WARN): the protocol, the token, validation
#                     and HTTP, nothing an operator reads
#   service-pool<N>   the service as deployed with a reactive pool of N connections
#                     (QUARKUS_DATASOURCE_REACTIVE_MAX_SIZE=N) instead of its default
#   service-loops<N>  the service as deployed on N event loops (QUARKUS_VERTX_EVENT_LOOPS_POOL_SIZE=N)
#                     instead of its one
#   service-loop-nice<N>  the service as deployed, its event loop's thread at nice -N (the rest of
#                     the process and PostgreSQL at 0). A diagnostic: on a machine it shares with
#                     PostgreSQL, the one thread that serves every request gets a core no more often
#                     than each busy backend does
#   service-own-session  the service as deployed, started in a session of its own (setsid): the
#                     kernel's autogroup then schedules it apart from this script and wrk, as a
#                     process started from another terminal or by systemd is. A diagnostic
#   service-async-commit  the service as deployed on a database with synchronous_commit off: a
#                     commit no longer waits for its WAL to reach the disk. A diagnostic only, of
#                     what those waits cost (never a setting: an order answered 201 could vanish in
#                     a crash of PostgreSQL)
# Knobs: JAVA_HOME, PG_URL (postgresql://postgres@127.0.0.1:5432; databases orders_floor_<target>
# are created and dropped), WARMUP_SECONDS (60), JIT_SETTLE_SECONDS (120: then creates at the first
# connection count until the JIT is quiet, as bench/run.sh), DURATION (20), CONNECTIONS ("16 64"). Writes
# bench/out/floor-<time>/ (the logs and results.md). Run it on a quiet machine, alone.
set -euo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_DIR=$(dirname "$DIR")
ROOT=$(dirname "$BENCH_DIR")
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
export JAVA_HOME
PG_URL=${PG_URL:-postgresql://postgres@127.0.0.1:5432}
TARGETS=${TARGETS:-floor floor-one-loop service-bare service-no-relay service}
WARMUP_SECONDS=${WARMUP_SECONDS:-60}
DURATION=${DURATION:-20}
CONNECTIONS=${CONNECTIONS:-16 64}
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
OUT="$BENCH_DIR/out/floor-$(date +%Y%m%d-%H%M%S)"
TMP=$(mktemp -d)
PID=""
DB=""
CLK_TCK=$(getconf CLK_TCK)

die() { echo "ERROR: $*" >&2; exit 1; }
log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*"; }
for tool in wrk psql curl python3 openssl; do command -v "$tool" >/dev/null || die "$tool is needed"; done
[ -f "$ROOT/target/quarkus-app/quarkus-run.jar" ] || die "no target/quarkus-app: ./mvnw -B package -DskipTests first"
mkdir -p "$OUT"

stop() {
    [ -z "$PID" ] || { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; }
    PID=""
    [ -z "$DB" ] || psql -q "$PG_URL/postgres" -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
    DB=""
}
trap 'stop; rm -rf "$TMP"' EXIT

# PostgreSQL's CPU as bench/run.sh counts it: the postmaster (with the children it reaped) and its live children.
# shellcheck source=bench/pg-cpu.sh
. "$BENCH_DIR/pg-cpu.sh"
pg_find_postmaster "$PG_URL/postgres"
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$PID/stat"; }
# shellcheck source=bench/box.sh
. "$BENCH_DIR/box.sh"

# shellcheck source=bench/jwt.sh
. "$BENCH_DIR/jwt.sh"
new_key_pair
NOW=$(date +%s)
ISSUER=https://bench.local/floor
TOKEN=$(make_jwt "{\"iss\":\"$ISSUER\",\"sub\":\"7\",\"iat\":$NOW,\"exp\":$((NOW + 14400)),\"jti\":\"floor-$NOW\"}")

if [[ " $TARGETS " == *" floor "* || " $TARGETS " == *" floor-one-loop "* ]]; then
    log "building the floor application"
    (cd "$ROOT" && ./mvnw -B -q -f bench/request-floor/pom.xml package -DskipTests >"$OUT/floor-build.log" 2>&1) \
        || die "the floor application did not build (see $OUT/floor-build.log)"
fi

# The environment that makes a service variant.
variant() {
    case $1 in
        floor-one-loop) echo QUARKUS_VERTX_EVENT_LOOPS_POOL_SIZE=1 ;;
        service-no-relay) echo OUTBOX_RELAY_ENABLED=false ;;
        service-bare) echo OUTBOX_RELAY_ENABLED=false QUARKUS_OTEL_SDK_DISABLED=true \
            QUARKUS_LOG_CATEGORY__COM_RETRYSAFE_ORDERS_IDEMPOTENCY__LEVEL=WARN ;;
        service-pool*) echo QUARKUS_DATASOURCE_REACTIVE_MAX_SIZE="${1#service-pool}" ;;
        service-loops*) echo QUARKUS_VERTX_EVENT_LOOPS_POOL_SIZE="${1#service-loops}" ;;
    esac
}

# start TARGET: a fresh database, then the process; returns when it answers.
start() {
    local target=$1 app own_session=""
    [[ $target != service-own-session ]] || own_session=1
    DB="orders_floor_${target//-/_}"
    psql -q "$PG_URL/postgres" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
    [[ $target != service-async-commit ]] \
        || psql -q "$PG_URL/postgres" -c "ALTER DATABASE $DB SET synchronous_commit = off" >/dev/null
    if [[ $target == floor* ]]; then
        # The service's own schema, as its Flyway would leave it.
        for f in $(ls "$ROOT"/src/main/resources/db/migration/V*.sql | sort -V); do
            psql -q -v ON_ERROR_STOP=1 "$PG_URL/$DB" -f "$f" >/dev/null
        done
        app="$DIR/target/quarkus-app"
    else
        app="$ROOT/target/quarkus-app"
    fi
    (cd "$app" && exec env QUARKUS_DATASOURCE_REACTIVE_URL="$PG_URL/$DB" \
        MP_JWT_VERIFY_PUBLICKEY_LOCATION="$TMP/pub.pem" MP_JWT_VERIFY_ISSUER="$ISSUER" \
        QUARKUS_HTTP_PORT="$PORT" QUARKUS_HTTP_HOST=127.0.0.1 \
        $(variant "$target") \
        ${own_session:+setsid} "$JAVA_HOME/bin/java" -jar quarkus-run.jar >"$OUT/$target.log" 2>&1) &
    PID=$!
    for _ in $(seq 1 120); do
        # The service is ready when its readiness says UP; the floor has no health endpoint, so any
        # HTTP answer means it listens (its schema is in place before it starts).
        if [[ $target == floor* ]]; then
            curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
        else
            curl -fs -o /dev/null "http://127.0.0.1:$PORT/q/health/ready" && break
        fi
        kill -0 "$PID" 2>/dev/null || die "$target exited (see $OUT/$target.log)"
        sleep 0.5
    done
    if [[ $target == service-loop-nice* ]]; then
        local task
        for task in /proc/"$PID"/task/*; do
            [[ $(cat "$task/comm") != vert.x-eventloo* ]] || renice -n "-${target#service-loop-nice}" -p "${task##*/}" >/dev/null
        done
    fi
    # The kernel's scheduling group (autogroup, one per session): wrk's is this script's.
    log "$target: pid $PID, scheduling group $(cat "/proc/$PID/autogroup" 2>/dev/null || echo none), wrk's $(cat /proc/self/autogroup 2>/dev/null || echo none)" >&2
    # The service's schema comes from its Flyway at start-up: make sure it is there before seeding.
    until psql -X -q -A -t "$PG_URL/$DB" -c "SELECT 1 FROM sku_inventory LIMIT 0" >/dev/null 2>&1; do sleep 0.5; done
    psql -q "$PG_URL/$DB" -c "INSERT INTO sku_inventory (sku_id, available) SELECT g, 2000000000 FROM generate_series(1, 1000) g"
}

# shellcheck source=bench/load.sh
. "$BENCH_DIR/load.sh"

field() { sed -E "s/.* $1=([^ ]+).*/\1/" <<<"$2"; }

# measure TARGET SCENARIO CONNECTIONS KEY_PREFIX [ARG]: one window of bench/lua/SCENARIO.lua;
# appends a row to the table. Each create window has keys of its own (a key used twice would be a replay).
measure() {
    local t0 p0 b0 t1 p1 b1 line n bad
    t0=$(ticks); p0=$(pg_ticks); b0=$(box_ticks)
    line=$(load "$2" "$3" "$DURATION" "$4" "${5:-}")
    t1=$(ticks); p1=$(pg_ticks); b1=$(box_ticks)
    n=$(field received "$line")
    bad=$(( $(field non201 "$line") + $(field unanswered "$line") + $(field lost "$line") + $(field wrk_status_errors "$line") ))
    awk -v tg="$1" -v sc="$2" -v c="$3" -v rps="$(field rps "$line")" -v p50="$(field p50_us "$line")" \
        -v p99="$(field p99_us "$line")" -v bad="$bad" -v t=$((t1 - t0)) -v p=$((p1 - p0)) -v n="$n" -v hz="$CLK_TCK" \
        -v idle="$(idle_pct "$b0" "$b1")" \
        'BEGIN { printf "| %s | %s | %d | %.1f | %.2f | %.2f | %d | %.3f | %.3f | %d |\n",
                 tg, sc, c, rps, p50 / 1000, p99 / 1000, bad, t * 1000 / hz / n, p * 1000 / hz / n, idle }' \
        | tee -a "$OUT/results.md"
}

{
    echo "| target | scenario | conns | req/s | p50 ms | p99 ms | errors | process CPU ms/req | PostgreSQL CPU ms/req | machine idle % |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
} | tee "$OUT/results.md"
for target in $TARGETS; do
    case $target in floor | floor-one-loop | service | service-no-relay | service-bare | service-async-commit | service-own-session) ;;
        service-pool[1-9] | service-pool[1-9][0-9] | service-loops[1-9] | service-loop-nice[1-9] | service-loop-nice1[0-9]) ;;
        *) die "unknown target $target" ;;
    esac
    RUN="fl$(date +%H%M%S)"   # keys are <run>-<scenario>-...; a replay key holds "-replay-"
    log "$target: starting, then ${WARMUP_SECONDS}s of creates at 64 connections" >&2
    start "$target"
    load create 64 "$WARMUP_SECONDS" warmup >/dev/null
    settle_jit "$PID" "${CONNECTIONS%% *}" jit-settle
    for c in $CONNECTIONS; do measure "$target" create "$c" "create$c"; done
    load replay 16 120 replay mode=prime >/dev/null
    load replay 64 "$DURATION" replay mode=replay >/dev/null
    for c in $CONNECTIONS; do measure "$target" replay "$c" replay mode=replay; done
    stop
done
log "results: $OUT/results.md" >&2
