#!/usr/bin/env bash
# Where the service's CPU goes per create and per replay (issue 17): the packaged service under
# wrk (bench/lua), one JFR recording (settings=profile) of each measured window, then
# bench/jfr-top.py on each: the share of each part of the stack, the top frames, our frames.
# Also prints the service's CPU per request in the window, from /proc (JFR adds a few per cent).
#
#   ./mvnw -B package -DskipTests && bench/profile.sh
#
# Knobs (environment): JAVA_HOME, JAVA_OPTS, PG_URL (postgresql://postgres@127.0.0.1:5432/orders_profile;
# the database is created fresh and dropped at the end), WARMUP_SECONDS (60), JIT_SETTLE_SECONDS (120:
# then creates until the JIT is quiet, as bench/run.sh), DURATION (20),
# CREATE_CONNECTIONS (16), REPLAY_CONNECTIONS (64). Writes bench/out/profile-<time>/{create,replay}.jfr.
# Run it on a quiet machine: other work shifts the shares less than the figures, but it does.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
APP="$(dirname "$BENCH_DIR")/target/quarkus-app"
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
JAVA_OPTS=${JAVA_OPTS:-}
PG_URL=${PG_URL:-postgresql://postgres@127.0.0.1:5432/orders_profile}
WARMUP_SECONDS=${WARMUP_SECONDS:-60}
DURATION=${DURATION:-20}
CREATE_CONNECTIONS=${CREATE_CONNECTIONS:-16}
REPLAY_CONNECTIONS=${REPLAY_CONNECTIONS:-64}
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
OUT="$BENCH_DIR/out/profile-$(date +%Y%m%d-%H%M%S)"
TMP=$(mktemp -d)
PID=""

die() { echo "ERROR: $*" >&2; exit 1; }
[ -f "$APP/quarkus-run.jar" ] || die "no $APP/quarkus-run.jar: ./mvnw -B package -DskipTests first"
for tool in wrk psql curl python3; do command -v "$tool" >/dev/null || die "$tool is needed"; done
mkdir -p "$OUT"

db=${PG_URL##*/}; db=${db%%\?*}
admin=${PG_URL%/*}/postgres
cleanup() {
    [ -z "$PID" ] || { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; }
    psql -q "$admin" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
    rm -rf "$TMP"
}
trap cleanup EXIT
psql -q "$admin" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"

# shellcheck source=bench/service.sh
. "$BENCH_DIR/service.sh"
# shellcheck source=bench/jwt.sh
. "$BENCH_DIR/jwt.sh"
new_key_pair
NOW=$(date +%s)
ISSUER=https://bench.local/profile
TOKEN=$(make_jwt "{\"iss\":\"$ISSUER\",\"sub\":\"7\",\"iat\":$NOW,\"exp\":$((NOW + 7200)),\"jti\":\"profile-$NOW\"}")
RUN="prof$(date +%H%M%S)"   # keys are <run>-<scenario>-...: 16 characters at least

(cd "$APP" && exec env QUARKUS_DATASOURCE_REACTIVE_URL="$PG_URL" \
    MP_JWT_VERIFY_PUBLICKEY_LOCATION="$TMP/pub.pem" MP_JWT_VERIFY_ISSUER="$ISSUER" \
    QUARKUS_HTTP_PORT="$PORT" QUARKUS_HTTP_HOST=127.0.0.1 \
    "$JAVA_HOME/bin/java" $JAVA_OPTS -jar quarkus-run.jar >"$OUT/service.log" 2>&1) &
PID=$!
await_ready "$PID" "$PORT" "$OUT/service.log"
psql -q "$PG_URL" -c "INSERT INTO sku_inventory (sku_id, available) SELECT g, 2000000000 FROM generate_series(1, 1000) g"

# shellcheck source=bench/load.sh
. "$BENCH_DIR/load.sh"
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$PID/stat"; }
# measure NAME SCRIPT CONNECTIONS SCENARIO [ARG]: one recorded window, then its figures.
measure() {
    local name=$1 t0 t1 line answered
    "$JAVA_HOME/bin/jcmd" "$PID" JFR.start name="$name" settings=profile filename="$OUT/$name.jfr" >/dev/null
    t0=$(ticks)
    line=$(load "$2" "$3" "$DURATION" "$4" "${5:-}")
    t1=$(ticks)
    "$JAVA_HOME/bin/jcmd" "$PID" JFR.stop name="$name" >/dev/null
    answered=$(sed -E 's/.* received=([0-9]+).*/\1/' <<<"$line")
    echo "== $name, $3 connections: $line"
    awk -v t=$((t1 - t0)) -v n="$answered" -v hz="$(getconf CLK_TCK)" \
        'BEGIN { printf "service CPU: %.3f ms per request (%d requests, JFR on)\n", t * 1000 / hz / n, n }'
    python3 "$BENCH_DIR/jfr-top.py" "$OUT/$name.jfr" "$JAVA_HOME"
}

echo "warm-up: ${WARMUP_SECONDS}s of creates at 64 connections"
load create 64 "$WARMUP_SECONDS" warmup >/dev/null
settle_jit "$PID" "$CREATE_CONNECTIONS" jit-settle
measure create create "$CREATE_CONNECTIONS" create
load replay 16 120 replay mode=prime >/dev/null
load replay 64 "$DURATION" replay mode=replay >/dev/null
measure replay replay "$REPLAY_CONNECTIONS" replay mode=replay
echo "recordings: $OUT"
