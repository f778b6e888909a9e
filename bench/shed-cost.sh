#!/usr/bin/env bash
# What one shed answer costs the service in CPU (issue 45, API.md section 12): the packaged service
# pinned to CPU 0 with its door's limit at 1 and that one place held by a request whose body never
# comes, so every other /api/ request is answered 503 at the door; wrk, pinned to CPU 1, sends
# GET /api/orders/1 on CONNECTIONS keep-alive connections for DURATION seconds. Prints the answers
# a second, the service's CPU (user + system, from /proc) per answer in microseconds, and wrk's own
# CPU. With PROFILE=1, a JFR recording of the window and bench/jfr-top.py on it.
#
#   ./mvnw -B package -DskipTests && bench/shed-cost.sh
#
# Knobs (environment): JAVA_HOME, JAVA_OPTS, PG_URL (postgresql://postgres@127.0.0.1:5432/orders_shed;
# created fresh, dropped at the end), CONNECTIONS (64), WARMUP (20), DURATION (20), PROFILE (0),
# ROUNDS (3). Needs wrk, taskset, psql, curl, python3 and 2 CPUs.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
APP="$(dirname "$BENCH_DIR")/target/quarkus-app"
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
JAVA_OPTS=${JAVA_OPTS:-}
PG_URL=${PG_URL:-postgresql://postgres@127.0.0.1:5432/orders_shed}
CONNECTIONS=${CONNECTIONS:-64}
WARMUP=${WARMUP:-20}
DURATION=${DURATION:-20}
ROUNDS=${ROUNDS:-3}
PROFILE=${PROFILE:-0}
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
OUT="$BENCH_DIR/out/shed-$(date +%Y%m%d-%H%M%S)"
TMP=$(mktemp -d)
PID=""
HOLDER=""

die() { echo "ERROR: $*" >&2; exit 1; }
[ -f "$APP/quarkus-run.jar" ] || die "no $APP/quarkus-run.jar: ./mvnw -B package -DskipTests first"
for tool in wrk taskset psql curl python3; do command -v "$tool" >/dev/null || die "$tool is needed (Debian: apt-get install $tool)"; done
[ "$(nproc)" -ge 2 ] || die "two CPUs are needed: the service on one, wrk on the other"
mkdir -p "$OUT"

db=${PG_URL##*/}; db=${db%%\?*}
admin=${PG_URL%/*}/postgres
cleanup() {
    [ -z "$HOLDER" ] || kill "$HOLDER" 2>/dev/null || true
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
TOKEN=$(make_jwt "{\"iss\":\"https://bench.local/shed\",\"sub\":\"7\",\"iat\":$NOW,\"exp\":$((NOW + 7200)),\"jti\":\"shed-$NOW\"}")

(cd "$APP" && exec env QUARKUS_DATASOURCE_REACTIVE_URL="$PG_URL" \
    MP_JWT_VERIFY_PUBLICKEY_LOCATION="$TMP/pub.pem" MP_JWT_VERIFY_ISSUER=https://bench.local/shed \
    QUARKUS_HTTP_PORT="$PORT" QUARKUS_HTTP_HOST=127.0.0.1 \
    OVERLOAD_LIMIT_INITIAL=1 OVERLOAD_LIMIT_MIN=1 OVERLOAD_LIMIT_MAX=1 \
    taskset -c 0 "$JAVA_HOME/bin/java" $JAVA_OPTS -jar quarkus-run.jar >"$OUT/service.log" 2>&1) &
PID=$!
await_ready "$PID" "$PORT" "$OUT/service.log"
JAVA_PID=$(pgrep -P "$PID" java || echo "$PID")

# The one place, held: a POST whose body never comes, sent again whenever the service answers it
# (its budget ends it). Its token is valid, so the token check does not end it first.
python3 - "$PORT" "$TOKEN" <<'EOF' &
import socket, sys
while True:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(("POST /api/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + sys.argv[2]
              + "\r\nIdempotency-Key: shed-cost-holder-" + str(id(s)) + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n").encode())
    try:
        s.recv(4096)
    except OSError:
        pass
    s.close()
EOF
HOLDER=$!
for _ in $(seq 1 50); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/api/orders/1")" = 503 ] && break
    sleep 0.1
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/api/orders/1")" = 503 ] \
    || die "the door did not shed with its one place held"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)
window() { # SECONDS: prints "answers/s service-us-per-answer wrk-cpu-share"
    local before after wrk_out="$TMP/wrk.txt"
    before=$(cpu_ticks "$JAVA_PID")
    /usr/bin/time -f '%U %S' -o "$TMP/wrk.time" taskset -c 1 wrk -t 1 -c "$CONNECTIONS" -d "${1}s" \
        "http://127.0.0.1:$PORT/api/orders/1" >"$wrk_out" 2>&1
    after=$(cpu_ticks "$JAVA_PID")
    local requests non2xx
    requests=$(awk '/requests in/{print $1}' "$wrk_out")
    python3 - "$requests" "$1" "$((after - before))" "$TICK" "$(cat "$TMP/wrk.time")" <<'EOF'
import sys
requests, seconds, ticks, tick = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
wrk_user, wrk_sys = (float(x) for x in sys.argv[5].split())
print(f"{requests / seconds:.0f} answers/s, service {ticks / tick / requests * 1e6:.1f} us CPU per answer"
      f" ({ticks / tick / seconds * 100:.0f} % of its CPU), wrk {(wrk_user + wrk_sys) / seconds * 100:.0f} % of its CPU")
EOF
}

echo "warm-up, $WARMUP s" >&2
window "$WARMUP" >/dev/null
for round in $(seq 1 "$ROUNDS"); do
    if [ "$PROFILE" = 1 ] && [ "$round" = 1 ]; then
        "$JAVA_HOME/bin/jcmd" "$JAVA_PID" JFR.start name=shed settings=profile filename="$OUT/shed.jfr" >/dev/null
        echo "round $round (JFR on): $(window "$DURATION")"
        "$JAVA_HOME/bin/jcmd" "$JAVA_PID" JFR.stop name=shed >/dev/null
        python3 "$BENCH_DIR/jfr-top.py" "$OUT/shed.jfr" "$JAVA_HOME" >"$OUT/shed-top.txt" && echo "profile: $OUT/shed-top.txt"
    else
        echo "round $round: $(window "$DURATION")"
    fi
done
grep -c '"status":503\|503' "$TMP/wrk.txt" >/dev/null || true
