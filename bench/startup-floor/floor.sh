#!/usr/bin/env bash
# The start-up floor (issue 15): how fast the smallest Quarkus applications start on this machine,
# packaged and cached as the service is (-Paot, the cache retrained by a full start and a few
# requests, as bench/aot-train.sh does), timed as bench/startup.sh times the service: from process
# start to the first answer (rest: GET /hello; pg: the first UP of /q/health/ready). Besides the
# wall time it prints the CPU the process used by then and the main thread's part of it: the main
# thread's work (JVM creation, then Quarkus's start) is sequential, so no number of cores brings
# the time to ready under it.
#
#   bench/startup-floor/floor.sh        # both variants, RUNS (5) starts each, one after the other
#
# Knobs: RUNS, JAVA_HOME, PG_URL (as bench/startup.sh), PORT.
set -euo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$(dirname "$DIR")")
RUNS=${RUNS:-5}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
export JAVA_HOME
PG_URL=${PG_URL:-postgresql://postgres@127.0.0.1:5432/orders_startup}
PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
JAVA="$JAVA_HOME/bin/java"
PID=""
trap '[ -n "$PID" ] && kill -9 "$PID" 2>/dev/null || true' EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }
CLK_TCK=$(getconf CLK_TCK)
# "<process CPU ms> <main thread CPU ms>": the JVM leaves the launcher's threads named "java" (the
# main thread, and the launcher's own, which only waits); every other thread gets its own name.
cpu_ms() {
    awk -v hz="$CLK_TCK" '{printf "%d ", ($14 + $15) * 1000 / hz}' "/proc/$PID/stat"
    for task in /proc/"$PID"/task/*; do
        if [ "$(cat "$task/comm")" = java ]; then cat "$task/stat"; fi
    done | sed 's/^.*) //' | awk -v hz="$CLK_TCK" '{t += $12 + $13} END {printf "%d\n", t * 1000 / hz}'
}
start() {
    (cd "$1" && exec env QUARKUS_DATASOURCE_REACTIVE_URL="$PG_URL" QUARKUS_HTTP_PORT="$PORT" \
        "$JAVA" "${@:2}" -jar quarkus-run.jar >"$1/floor.log" 2>&1) &
    PID=$!
}
await() {
    local deadline=$(($(now_ms) + 60000))
    until curl -s --max-time 1 "http://127.0.0.1:$PORT$1" 2>/dev/null | grep -qE "$2"; do
        kill -0 "$PID" 2>/dev/null || { cat "$APP/floor.log" >&2; echo "ERROR: exited" >&2; exit 1; }
        [ "$(now_ms)" -lt "$deadline" ] || { echo "ERROR: not ready within 60 s" >&2; exit 1; }
        sleep 0.01
    done
}
stop() { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2] + a[NR/2+1]) / 2)}'; }

for variant in rest pg; do
    if [ "$variant" = pg ]; then path=/q/health/ready; expect='"status": *"UP"'; profile=-Ppg; else path=/hello; expect='^ok$'; profile=; fi
    (cd "$DIR" && "$ROOT/mvnw" -B -q -f "$DIR/pom.xml" clean package -DskipTests $profile >/dev/null)
    APP="$DIR/target/quarkus-app"
    rm -f "$APP/app.aot"
    start "$APP" -XX:AOTCacheOutput=app.aot
    await "$path" "$expect"
    for _ in 1 2 3 4 5; do curl -s -o /dev/null "http://127.0.0.1:$PORT$path"; done
    stop
    walls=(); cpus=(); mains=()
    for i in $(seq 1 "$RUNS"); do
        started=$(now_ms)
        start "$APP" -XX:AOTCache=app.aot
        await "$path" "$expect"
        wall=$(($(now_ms) - started))
        read -r cpu main < <(cpu_ms)
        echo "$variant run $i: ready_ms=$wall cpu_ms=$cpu main_thread_cpu_ms=$main"
        walls+=("$wall"); cpus+=("$cpu"); mains+=("$main")
        stop
    done
    echo "$variant: ready_ms=$(printf '%s\n' "${walls[@]}" | median) cpu_ms=$(printf '%s\n' "${cpus[@]}" | median)" \
        "main_thread_cpu_ms=$(printf '%s\n' "${mains[@]}" | median) (load $(cut -d' ' -f1-3 /proc/loadavg))"
done
