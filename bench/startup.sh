#!/usr/bin/env bash
# Start-up time of the packaged service (issue 15): RUNS starts against an already-migrated
# database, each timed from process start to the first UP of /q/health/ready, then the latency of
# the first API request (GET /api/orders with a valid token: JWT check and one query). Each start
# also reports the CPU the process used by then, and the main thread's part of it.
# The last line is the median time to ready: ready_ms=<median>.
#
#   bench/startup.sh            # uses target/quarkus-app as built (./mvnw package, or the AOT build)
#
# The service runs as in production: `java -jar target/quarkus-app/quarkus-run.jar`, configured by
# environment variables only. When target/quarkus-app/app.aot exists (the AOT build, README
# "Fast start") and the JDK is 25 or newer, -XX:AOTCache=app.aot is added; AOT=0 leaves it out.
#
# Knobs (environment): RUNS (5), JAVA_HOME, JAVA_OPTS (added to the java command), AOT (1),
# PG_URL (postgresql://postgres@127.0.0.1:5432/orders_startup; the database is created if it is
# missing and migrated by an untimed first start), PORT (a free port).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_DIR")
APP="$ROOT/target/quarkus-app"
RUNS=${RUNS:-5}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
JAVA_OPTS=${JAVA_OPTS:-}
AOT=${AOT:-1}
PG_URL=${PG_URL:-postgresql://postgres@127.0.0.1:5432/orders_startup}
PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
TMP=$(mktemp -d)
PID=""
cleanup() { [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

die() { echo "ERROR: $*" >&2; exit 1; }
[ -f "$APP/quarkus-run.jar" ] || die "no $APP/quarkus-run.jar: build it first (./mvnw -B package -DskipTests)"
command -v curl >/dev/null || die "curl is needed"

# shellcheck source=bench/jwt.sh
. "$BENCH_DIR/jwt.sh"
new_key_pair
NOW=$(date +%s)
TOKEN=$(make_jwt "{\"iss\":\"startup-bench\",\"sub\":\"7\",\"iat\":$NOW,\"exp\":$((NOW + 3600)),\"jti\":\"startup-$NOW\"}")

# The database must exist; Flyway migrates it on the first (untimed) start.
db=${PG_URL##*/}; db=${db%%\?*}
if command -v psql >/dev/null; then
    admin=${PG_URL%/*}/postgres
    psql -q "$admin" -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 \
        || psql -q "$admin" -c "CREATE DATABASE $db"
fi

java_opts=($JAVA_OPTS)
major=$("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')
if [ "$AOT" = 1 ] && [ -f "$APP/app.aot" ] && [ "${major%%.*}" -ge 25 ]; then
    java_opts+=("-XX:AOTCache=app.aot")
fi

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# start: launches the service in the background, sets PID and STARTED (ms).
start() {
    STARTED=$(now_ms)
    (cd "$APP" && exec env QUARKUS_DATASOURCE_REACTIVE_URL="$PG_URL" \
        MP_JWT_VERIFY_PUBLICKEY_LOCATION="$TMP/pub.pem" MP_JWT_VERIFY_ISSUER=startup-bench \
        QUARKUS_HTTP_PORT="$PORT" QUARKUS_SHUTDOWN_DELAY=0s \
        "$JAVA_HOME/bin/java" "${java_opts[@]}" -jar quarkus-run.jar >"$TMP/service.log" 2>&1) &
    PID=$!
}

# cpu_ms: CPU time (user + system) the service has used so far, in ms. Unlike the wall time it
# hardly changes when other work competes for the cores, so it tells a change in the service's own
# start-up work from noise.
CLK_TCK=$(getconf CLK_TCK)
cpu_ms() { awk -v hz="$CLK_TCK" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$PID/stat"; }
# main_cpu_ms: the main thread's part of it (JVM creation, then Quarkus's start, one after the other:
# no number of cores brings the time to ready under it). The JVM leaves the launcher's threads named
# "java" (the main thread, and the launcher's own, which only waits); every other thread is renamed.
main_cpu_ms() {
    for task in /proc/"$PID"/task/*; do
        if [ "$(cat "$task/comm")" = java ]; then cat "$task/stat"; fi
    done | sed 's/^.*) //' | awk -v hz="$CLK_TCK" '{t += $12 + $13} END {print int(t * 1000 / hz)}'
}

# await_ready: "<ms from STARTED to the first UP of /q/health/ready> <cpu_ms then> <main_cpu_ms then>"
# (60 s at most).
await_ready() {
    local deadline=$(($(now_ms) + 60000))
    while [ "$(now_ms)" -lt "$deadline" ]; do
        if curl -s --max-time 1 "http://127.0.0.1:$PORT/q/health/ready" 2>/dev/null | grep -q '"status": *"UP"'; then
            echo "$(($(now_ms) - STARTED)) $(cpu_ms) $(main_cpu_ms)"
            return 0
        fi
        kill -0 "$PID" 2>/dev/null || { cat "$TMP/service.log" >&2; die "the service exited"; }
        sleep 0.01
    done
    cat "$TMP/service.log" >&2
    die "not ready within 60 s"
}

stop() {
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2] + a[NR/2+1]) / 2)}'; }

echo "jar: $APP/quarkus-run.jar; java ${java_opts[*]:-}(JDK $major); database $PG_URL; load $(cut -d' ' -f1-3 /proc/loadavg)"
start
await_ready >/dev/null
stop
echo "warm-up start done (database migrated)"

readies=()
cpus=()
mains=()
firsts=()
for i in $(seq 1 "$RUNS"); do
    start
    read -r ready cpu main < <(await_ready)
    first=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' -H "Authorization: Bearer $TOKEN" \
        "http://127.0.0.1:$PORT/api/orders?limit=1")
    code=${first%% *}
    [ "$code" = 200 ] || die "first request answered $code"
    first_ms=$(awk -v t="${first#* }" 'BEGIN {printf "%d", t * 1000}')
    started_line=$(grep -o 'started in [0-9.]*s' "$TMP/service.log" | head -1 || true)
    echo "run $i: ready_ms=$ready cpu_ms=$cpu main_thread_cpu_ms=$main first_request_ms=$first_ms (log: ${started_line:-n/a})"
    readies+=("$ready")
    cpus+=("$cpu")
    mains+=("$main")
    firsts+=("$first_ms")
    stop
done
echo "cpu_ms median=$(printf '%s\n' "${cpus[@]}" | median) main_thread_cpu_ms median=$(printf '%s\n' "${mains[@]}" | median)" \
    "first_request_ms median=$(printf '%s\n' "${firsts[@]}" | median); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ready_ms=$(printf '%s\n' "${readies[@]}" | median)"
