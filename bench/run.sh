#!/usr/bin/env bash
# Benchmark of POST /api/orders against the local PostgreSQL, with a pgbench ceiling (our SQL), a
# pgbench floor (bench/floor.sql) and a correctness check of the database afterwards. See bench/README.md.
#
#   bench/run.sh [--build]
#   PEER=1 bench/run.sh      # and the same scenarios on the seed's design (the Spring peer), row by row
#
# Knobs (environment): DURATION (s per scenario, 20), WARMUP_SECONDS (60), POOL (service's
# reactive pool max size; empty = service default), CONNECTIONS ("16 64"), REPLAY_KEYS (1000),
# GRACE_SECONDS (15), CEILING_LATENCY (1 = pgbench -l for p50/p99 of the ceiling), JAVA_HOME,
# JAVA_OPTS, KEEP_DB (1 = do not drop the database), REDIS (0 = skip the replay+redis phase),
# REDIS_DB (3: the Redis database index the replay+redis phase flushes and uses), PEER (1 = also
# measure the peer in ../shared/peers/spring-seed beside the service, on a fresh database of its own,
# the same scenarios, alternating with the service row by row),
# PEER_DIR (the peer's sources), PEER_JAR (a built peer jar; default: built from PEER_DIR),
# GROWTH_RECORDS (0; N > 0 adds the growth rows: N live records prefilled by SQL, expiring
# evenly over 24 h, while creates run and the cleanup deletes what expires), CLEANUP_INTERVAL (5s),
# OUTBOX_SETTLE_SECONDS (120: at most this long before each window for the relay to publish the
# events of the windows before it), JIT_SETTLE_SECONDS (120: after the warm-up, at most this long
# of creates at the first measured connection count until the JVM's JIT compilers are quiet),
# APP_NICE (empty; N runs the service and the peer alike at nice N, e.g. -10: ahead of
# PostgreSQL, wrk and the kernel's workers for a core, as on a machine of their own),
# OWNER_SHARE (0: the service's overload.owner.max-in-flight; the bench is one owner).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_DIR")
cd "$ROOT"

usage() { # the comment block at the top of this file
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}

BUILD=0
for arg in "$@"; do
    case "$arg" in
        --build) BUILD=1 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "unknown argument: $arg" >&2; usage >&2; exit 2 ;;
    esac
done

DURATION=${DURATION:-20}
WARMUP_SECONDS=${WARMUP_SECONDS:-60}
POOL=${POOL:-}
# Every request of the bench is one owner's: at 64 connections that owner has 64 in progress, a
# flood by the service's rules (its share is 16, docs/CONFIGURATION.md), answered 429 past it. The
# bench measures the service's speed; OverloadIT measures the share. 0 turns the share off.
OWNER_SHARE=${OWNER_SHARE:-0}
APP_NICE=${APP_NICE:-}
CONNECTIONS=${CONNECTIONS:-16 64}
REPLAY_KEYS=${REPLAY_KEYS:-1000}
GRACE_SECONDS=${GRACE_SECONDS:-15}
CEILING_LATENCY=${CEILING_LATENCY:-0}
KEEP_DB=${KEEP_DB:-0}
OUTBOX_SETTLE_SECONDS=${OUTBOX_SETTLE_SECONDS:-120}
JIT_SETTLE_SECONDS=${JIT_SETTLE_SECONDS:-120}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
JAVA_OPTS=${JAVA_OPTS:-}
REDIS=${REDIS:-1}
REDIS_DB=${REDIS_DB:-3}
PEER=${PEER:-0}
PEER_DIR=${PEER_DIR:-$ROOT/../shared/peers/spring-seed}
PEER_JAR=${PEER_JAR:-}
GROWTH_RECORDS=${GROWTH_RECORDS:-0}
CLEANUP_INTERVAL=${CLEANUP_INTERVAL:-5s}

THREADS=2                    # wrk threads and pgbench -j
SKUS=1000                    # SKU ids 1..SKUS
HOT_SKU=1000001              # the one hot SKU
INITIAL_STOCK=2000000000     # every SKU starts with this, so no 422 can occur
OWNER=7                      # sub of the shopper token
WRK_TIMEOUT=10               # s: a slower answer counts as a wrk timeout error
PG_HOST=127.0.0.1            # only 127.0.0.1 is ever targeted
PG_PORT=5432
PG_USER=postgres
REDIS_HOST=127.0.0.1         # the replay+redis phase's Redis (only this one is ever targeted)
REDIS_PORT=6379
JAR="$ROOT/target/quarkus-app/quarkus-run.jar"
CLK_TCK=$(getconf CLK_TCK)

die() { echo "ERROR: $*" >&2; exit 1; }
log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*"; }

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
for v in DURATION WARMUP_SECONDS REPLAY_KEYS GRACE_SECONDS OUTBOX_SETTLE_SECONDS JIT_SETTLE_SECONDS; do
    is_uint "${!v}" || die "$v must be a whole number, not '${!v}'"
done
[[ -z $POOL ]] || is_uint "$POOL" || die "POOL must be a whole number, not '$POOL'"
[[ -z $APP_NICE ]] || [[ $APP_NICE =~ ^-?[0-9]+$ ]] || die "APP_NICE must be a whole number, not '$APP_NICE'"
[[ $CEILING_LATENCY == 0 || $CEILING_LATENCY == 1 ]] || die "CEILING_LATENCY must be 0 or 1"
[[ $REDIS == 0 || $REDIS == 1 ]] || die "REDIS must be 0 or 1"
[[ $PEER == 0 || $PEER == 1 ]] || die "PEER must be 0 or 1"
is_uint "$GROWTH_RECORDS" && ((GROWTH_RECORDS <= 100000000)) || die "GROWTH_RECORDS must be 0..100000000"
[[ $CLEANUP_INTERVAL =~ ^[0-9]+(ms|s|m)$ ]] || die "CLEANUP_INTERVAL must be like 5s, 500ms or 1m"
is_uint "$REDIS_DB" || die "REDIS_DB must be a Redis database index, not '$REDIS_DB'"
((DURATION >= 1 && DURATION <= 3600)) || die "DURATION must be 1..3600"
((WARMUP_SECONDS <= 3600)) || die "WARMUP_SECONDS must be 0..3600"
((REPLAY_KEYS >= 100 && REPLAY_KEYS <= 1000000)) || die "REPLAY_KEYS must be 100..1000000"
((GRACE_SECONDS >= 1 && GRACE_SECONDS <= 300)) || die "GRACE_SECONDS must be 1..300"
for c in $CONNECTIONS; do
    is_uint "$c" && ((c >= THREADS && c <= 1000)) || die "CONNECTIONS: '$c' is not a number in $THREADS..1000"
done
((REPLAY_KEYS >= 16)) || die "REPLAY_KEYS must be >= 16 (keys are primed on 16 connections)"

RUN_ID=$(date +%Y%m%d_%H%M%S)
OUT="$BENCH_DIR/out/$RUN_ID"
DB="bench_$RUN_ID"
MAIN_DB=$DB          # the service's database; DB names the one being measured (the peer's, in its phase)
[[ ! -e $OUT ]] || die "$OUT exists already (another run started in the same second?)"
KEY_RUN="b${RUN_ID//_/}$(printf '%04x' $((RANDOM % 65536)))"   # prefix of every Idempotency-Key
mkdir -p "$OUT"
# tee ignores INT/TERM, so a Ctrl-C cannot take the log down before the cleanup has run.
exec > >(trap '' INT TERM; exec tee -a "$OUT/run.log") 2>&1

TMP=$(mktemp -d)
SVC_PID=""
SVC_LOG="$OUT/service.log"
WRK_PID=""
DB_CREATED=0
PEER_DB=""           # the peer's database, once created (dropped at exit like DB)
TARGET=service       # the target measured now, service or peer (use_target, below)
declare -A TARGET_STATE  # the other target's globals, while it is not the current one

cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM
    if [[ -n $WRK_PID ]] && kill -0 "$WRK_PID" 2>/dev/null; then
        kill -KILL "$WRK_PID" 2>/dev/null
        wait "$WRK_PID" 2>/dev/null
    fi
    stop_service
    # The other target, when two run side by side (PEER=1).
    local other=${TARGET_STATE[peer.SVC_PID]:-}
    [[ $TARGET == service ]] || other=${TARGET_STATE[service.SVC_PID]:-}
    [[ -z $other ]] || { SVC_PID=$other; stop_service; }
    if ((DB_CREATED)); then
        if [[ $KEEP_DB == 1 ]]; then
            log "KEEP_DB=1: database(s) $MAIN_DB $PEER_DB kept (drop with: psql -h $PG_HOST -U $PG_USER -c 'DROP DATABASE <name>')"
        else
            log "dropping database $DB"
            for d in "$MAIN_DB" $PEER_DB; do
                timeout 60 psql -X -q -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres \
                    -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" || echo "WARNING: could not drop database $d" >&2
            done
        fi
    fi
    rm -rf "$TMP"
    log "output in $OUT (exit $rc)"
    exit "$rc"
}
# stop_service: SIGTERM to the service, up to 20 s for it to exit, then SIGKILL; clears SVC_PID.
# Also the exit trap's way to stop it, so it must not fail (and it runs with set +e there).
stop_service() {
    [[ -n $SVC_PID ]] || return 0
    if kill -0 "$SVC_PID" 2>/dev/null; then
        log "stopping the service (pid $SVC_PID)"
        kill -TERM "$SVC_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$SVC_PID" 2>/dev/null || break; sleep 0.2; done
        if kill -0 "$SVC_PID" 2>/dev/null; then
            log "service did not stop in 20 s: SIGKILL"
            kill -KILL "$SVC_PID" 2>/dev/null || true
        fi
    fi
    wait "$SVC_PID" 2>/dev/null || true
    SVC_PID=""
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT
trap 'echo "terminated" >&2; exit 143' TERM

# psql on the bench database (or -d given first), bounded, errors fatal.
q() { timeout 300 psql -X -q -A -t -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$DB" "$@"; }
qpg() { timeout 60 psql -X -q -A -t -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres "$@"; }

# ------------------------------------------------------------------------------------------
# Tools
# ------------------------------------------------------------------------------------------
for tool in psql pgbench curl openssl awk sort ss timeout; do
    command -v "$tool" >/dev/null || die "$tool is required"
done

# Redis, for the replay+redis phase: checked now rather than after minutes of runs.
redis_cli() { timeout 10 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" "$@"; }
redis_up() { [[ $(redis_cli ping 2>/dev/null) == PONG ]]; }
if ((REDIS)); then
    command -v redis-cli >/dev/null || die "redis-cli is required for the replay+redis phase (REDIS=0 skips it)"
    if ! redis_up; then
        command -v redis-server >/dev/null \
            || die "no Redis answers at $REDIS_HOST:$REDIS_PORT and redis-server is not installed (apt-get install redis-server; REDIS=0 skips the replay+redis phase)"
        log "no Redis at $REDIS_HOST:$REDIS_PORT: starting redis-server there (left running afterwards)"
        redis-server --daemonize yes --bind "$REDIS_HOST" --port "$REDIS_PORT" --save "" --appendonly no >/dev/null \
            || die "redis-server --daemonize yes --bind $REDIS_HOST --port $REDIS_PORT failed"
        for _ in $(seq 1 50); do redis_up && break; sleep 0.2; done
        redis_up || die "redis-server was started but $REDIS_HOST:$REDIS_PORT does not answer PING"
    fi
    # redis-cli -n N with N out of range only warns and stays on database 0: check the index first,
    # so that the FLUSHDB below can never hit another database.
    redis_dbs=$(redis_cli config get databases 2>/dev/null | sed -n 2p)
    if [[ -n $redis_dbs ]] && is_uint "$redis_dbs"; then
        ((REDIS_DB < redis_dbs)) || die "REDIS_DB=$REDIS_DB, but the Redis at $REDIS_HOST:$REDIS_PORT has databases 0..$((redis_dbs - 1))"
    fi
    [[ $(redis_cli -n "$REDIS_DB" ping 2>&1) == PONG ]] || die "cannot select Redis database $REDIS_DB at $REDIS_HOST:$REDIS_PORT"
    REDIS_VERSION=$(redis_cli info server | awk -F: '/^redis_version:/ { sub(/\r$/, "", $2); print $2 }')
    echo "Redis ${REDIS_VERSION:-?} at $REDIS_HOST:$REDIS_PORT, database $REDIS_DB for the replay+redis phase"
fi
[[ -x $JAVA_HOME/bin/java ]] || die "no java at JAVA_HOME=$JAVA_HOME"
JAVA_MAJOR=$("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 \
    | awk -F'= ' '/java.specification.version/ { split($2, v, "."); print v[1] }')
((${JAVA_MAJOR:-0} >= 21)) || die "JAVA_HOME=$JAVA_HOME is Java ${JAVA_MAJOR:-?}; the service needs 21 or newer"

if ! command -v wrk >/dev/null; then
    # An install may already be running (apt lock held): wait for it for up to 2 minutes.
    for _ in $(seq 1 60); do
        command -v wrk >/dev/null && break
        pgrep -x apt-get >/dev/null || pgrep -x dpkg >/dev/null || pgrep -x apt >/dev/null || break
        log "waiting for a running apt/dpkg to finish (wrk missing)"
        sleep 2
    done
fi
if ! command -v wrk >/dev/null; then
    log "installing wrk"
    SUDO=""
    ((EUID == 0)) || SUDO="sudo"
    timeout 600 $SUDO apt-get install -y wrk \
        || { timeout 600 $SUDO apt-get update && timeout 600 $SUDO apt-get install -y wrk; } \
        || die "could not install wrk (apt-get install -y wrk)"
fi
command -v wrk >/dev/null || die "wrk is still missing"

# ------------------------------------------------------------------------------------------
# PostgreSQL: durability settings, postmaster, fresh database
# ------------------------------------------------------------------------------------------
qpg -c 'SELECT 1' >/dev/null || die "no PostgreSQL at $PG_HOST:$PG_PORT (user $PG_USER)"
PG_VERSION=$(qpg -c 'SHOW server_version')
FSYNC=$(qpg -c 'SHOW fsync')
SYNC_COMMIT=$(qpg -c 'SHOW synchronous_commit')
MAX_CONN=$(qpg -c 'SHOW max_connections')
echo "PostgreSQL $PG_VERSION at $PG_HOST:$PG_PORT"
echo "SHOW fsync              -> $FSYNC"
echo "SHOW synchronous_commit -> $SYNC_COMMIT"
[[ $FSYNC == on ]] || die "fsync is '$FSYNC': the benchmark needs fsync = on"
[[ $SYNC_COMMIT == on ]] || die "synchronous_commit is '$SYNC_COMMIT': the benchmark needs synchronous_commit = on"
max_c=0
for c in $CONNECTIONS; do if ((c > max_c)); then max_c=$c; fi; done
if ((MAX_CONN < max_c + ${POOL:-20} + 5)); then
    die "max_connections = $MAX_CONN is too low for pgbench -c $max_c plus the service pool (${POOL:-20})"
fi

PG_PID=""
DATA_DIR=$(qpg -c 'SHOW data_directory' 2>/dev/null || true)
for pidfile in "$DATA_DIR/postmaster.pid" /var/lib/postgresql/15/main/postmaster.pid; do
    if [[ -r $pidfile ]]; then
        PG_PID=$(head -n 1 "$pidfile")
        break
    fi
done
if [[ -n $PG_PID && -r /proc/$PG_PID/stat ]]; then
    echo "postmaster pid $PG_PID (data directory $DATA_DIR)"
else
    echo "WARNING: cannot read the postmaster's /proc entry: PostgreSQL CPU is not measured" >&2
    PG_PID=""
fi

qpg -c "CREATE DATABASE $DB" >/dev/null
DB_CREATED=1
log "created database $DB"

# ------------------------------------------------------------------------------------------
# CPU and memory sampling from /proc
# ------------------------------------------------------------------------------------------
# utime+stime of one process, in clock ticks.
proc_ticks() {
    awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}
# shellcheck source=bench/box.sh
. "$BENCH_DIR/box.sh"
# shellcheck source=bench/jit.sh
. "$BENCH_DIR/jit.sh"
# shellcheck source=bench/pg-cpu.sh
. "$BENCH_DIR/pg-cpu.sh"
vm_hwm_mib() {
    awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"
}
# ms per request from a tick delta; "-" when not measurable.
ms_per() { # ticks requests
    awk -v t="$1" -v n="$2" -v hz="$CLK_TCK" 'BEGIN { if (t == "" || n <= 0) print "-"; else printf "%.3f", t * 1000 / hz / n }'
}

# ------------------------------------------------------------------------------------------
# Keys and tokens
# ------------------------------------------------------------------------------------------
# shellcheck source=bench/jwt.sh
. "$BENCH_DIR/jwt.sh"
new_key_pair
ISSUER="https://bench.local/$RUN_ID"
NOW=$(date +%s)
EXP=$((NOW + 86400))
TOKEN=$(make_jwt "{\"iss\":\"$ISSUER\",\"sub\":\"$OWNER\",\"iat\":$NOW,\"exp\":$EXP,\"jti\":\"$KEY_RUN-u\"}")
ADMIN_TOKEN=$(make_jwt "{\"iss\":\"$ISSUER\",\"sub\":\"1\",\"iat\":$NOW,\"exp\":$EXP,\"jti\":\"$KEY_RUN-a\",\"groups\":[\"inventory-admin\"]}")

# ------------------------------------------------------------------------------------------
# Build and start the service
# ------------------------------------------------------------------------------------------
if ((BUILD)) || [[ ! -f $JAR ]]; then
    log "building the jar (./mvnw -B -q package -DskipTests)"
    JAVA_HOME="$JAVA_HOME" timeout 1800 ./mvnw -B -q package -DskipTests > "$OUT/build.log" 2>&1 \
        || { tail -n 50 "$OUT/build.log"; die "build failed (see $OUT/build.log)"; }
fi
[[ -f $JAR ]] || die "no $JAR after the build"
JAR_TIME=$(stat -c %y "$ROOT/target/quarkus-app/app" 2>/dev/null | cut -d. -f1)
if [[ -n $(find "$ROOT/src/main" "$ROOT/pom.xml" -newer "$ROOT/target/quarkus-app/app" -type f -print -quit 2>/dev/null) ]]; then
    echo "WARNING: src/main or pom.xml changed after the jar was built ($JAR_TIME): this run measures the old jar; pass --build to rebuild" >&2
fi

if ((PEER)); then
    if [[ -z $PEER_JAR ]]; then
        [[ -f $PEER_DIR/pom.xml ]] || die "PEER=1: no peer sources at PEER_DIR=$PEER_DIR"
        # shared/ is read-only: build a copy, once per change of its sources.
        peer_build="$BENCH_DIR/out/peer-build"
        PEER_JAR="$peer_build/target/spring-seed-peer.jar"
        if [[ ! -f $PEER_JAR || -n $(find "$PEER_DIR" -newer "$PEER_JAR" -type f -print -quit) ]]; then
            log "building the peer from $PEER_DIR (log: $OUT/peer-build.log)"
            rm -rf "$peer_build" && mkdir -p "$peer_build" && cp -r "$PEER_DIR"/. "$peer_build"/
            (cd "$peer_build" && JAVA_HOME="$JAVA_HOME" timeout 1800 "$ROOT/mvnw" -B -q -DskipTests package) \
                > "$OUT/peer-build.log" 2>&1 || { tail -n 50 "$OUT/peer-build.log"; die "peer build failed"; }
        fi
    fi
    [[ -f $PEER_JAR ]] || die "no peer jar at $PEER_JAR"
    echo "peer: $PEER_JAR"
fi

# free_port [TAKEN]: a port nothing listens on, other than TAKEN.
free_port() {
    local p
    for _ in $(seq 1 200); do
        p=$((20000 + RANDOM % 20000))
        if [[ $p != "${1:-}" && -z $(ss -Htln "sport = :$p") ]]; then echo "$p"; return 0; fi
    done
    die "no free port found"
}
PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"

# launch LOGFILE COMMAND...: starts COMMAND in the background (its output to LOGFILE), waits for
# /q/health/ready on $PORT and sets SVC_PID (and SVC_LOG). The peak RSS (VmHWM) of a restarted
# service counts from its own start.
launch() {
    local logfile=$1 ready=0
    shift
    [[ -z $SVC_PID ]] || die "launch: the service is still running (pid $SVC_PID)"
    [[ -z $(ss -Htln "sport = :$PORT") ]] || die "port $PORT is taken: cannot start the service there"
    SVC_LOG=$logfile
    # nice and env exec java, so $! is the JVM's pid.
    ${APP_NICE:+nice -n "$APP_NICE"} "$@" > "$logfile" 2>&1 &
    SVC_PID=$!
    for _ in $(seq 1 180); do
        kill -0 "$SVC_PID" 2>/dev/null || { tail -n 40 "$logfile"; die "the service exited during start-up"; }
        if curl -fsS -o /dev/null --max-time 2 "$BASE/q/health/ready" 2>/dev/null; then ready=1; break; fi
        sleep 1
    done
    ((ready)) || { tail -n 40 "$logfile"; die "the service was not ready within 180 s"; }
    log "ready (pid $SVC_PID), java $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1)"
}

# start_service LOGFILE [NAME=VALUE ...]: the service's jar on $PORT and database $DB, with the
# base environment plus the given variables.
start_service() {
    local logfile=$1
    shift
    log "starting the service on port $PORT${1:+ with $*} (log: $logfile)"
    # JAVA_OPTS is a list of options (word-split).
    # shellcheck disable=SC2086
    launch "$logfile" env QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$PG_HOST:$PG_PORT/$DB" \
        QUARKUS_DATASOURCE_USERNAME="$PG_USER" \
        MP_JWT_VERIFY_PUBLICKEY_LOCATION="$TMP/pub.pem" \
        MP_JWT_VERIFY_ISSUER="$ISSUER" \
        QUARKUS_HTTP_PORT="$PORT" \
        QUARKUS_HTTP_HOST=127.0.0.1 \
        IDEMPOTENCY_CLEANUP_INTERVAL="$CLEANUP_INTERVAL" \
        ${POOL:+QUARKUS_DATASOURCE_REACTIVE_MAX_SIZE=$POOL} \
        OVERLOAD_OWNER_MAX_IN_FLIGHT="$OWNER_SHARE" \
        "$@" \
        "$JAVA_HOME/bin/java" $JAVA_OPTS -jar "$JAR"
}

# start_peer LOGFILE: the peer (the seed's design in Spring Boot) on $PORT and database $DB, with
# the same key, issuer and JVM options; its pool stays the seed's (HikariCP, 20) unless POOL is set.
start_peer() {
    log "starting the peer on port $PORT (log: $1)"
    # shellcheck disable=SC2086
    launch "$1" env SERVER_PORT="$PORT" SERVER_ADDRESS=127.0.0.1 \
        SPRING_DATASOURCE_URL="jdbc:postgresql://$PG_HOST:$PG_PORT/$DB" \
        SPRING_DATASOURCE_USERNAME="$PG_USER" SPRING_DATASOURCE_PASSWORD= \
        MP_JWT_VERIFY_PUBLICKEY_LOCATION="$TMP/pub.pem" \
        MP_JWT_VERIFY_ISSUER="$ISSUER" \
        ${POOL:+SPRING_DATASOURCE_HIKARI_MAXIMUM_POOL_SIZE=$POOL} \
        "$JAVA_HOME/bin/java" $JAVA_OPTS -jar "$PEER_JAR"
}

service_alive() {
    kill -0 "$SVC_PID" 2>/dev/null || { tail -n 40 "$SVC_LOG"; die "the service died (see $SVC_LOG)"; }
}

# ------------------------------------------------------------------------------------------
# Seed: SKUs 1..SKUS by SQL, the hot SKU through the API (checks the admin token too)
# ------------------------------------------------------------------------------------------
# Smoke test: one create and its replay, so a broken token or header fails here, clearly.
smoke() {
    curl -sS -D "$TMP/smoke.h" -o "$TMP/smoke.json" -w '%{http_code}' --max-time 10 -X POST "$BASE/api/orders" \
        -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: $KEY_RUN-smoke-0001" \
        -H 'Content-Type: application/json' -d '{"skuId":1,"quantity":1}'
}

seed_and_smoke() {
    q -c "INSERT INTO sku_inventory (sku_id, available) SELECT g, $INITIAL_STOCK FROM generate_series(1, $SKUS) g"
    code=$(curl -sS -o "$TMP/put.json" -w '%{http_code}' --max-time 10 -X PUT "$BASE/api/inventory/$HOT_SKU" \
        -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' -d "{\"available\": $INITIAL_STOCK}")
    [[ $code == 2* ]] || { cat "$TMP/put.json"; echo; die "PUT /api/inventory/$HOT_SKU answered $code"; }
    skus=$(q -c "SELECT count(*) FROM sku_inventory WHERE available = $INITIAL_STOCK")
    ((skus == SKUS + 1)) || die "seeded $skus SKUs, expected $((SKUS + 1))"
    log "seeded $skus SKUs (1..$SKUS and hot SKU $HOT_SKU) with $INITIAL_STOCK each"

    code=$(smoke)
    replayed=$(awk -F': *' 'tolower($1) == "idempotent-replayed" { gsub(/\r/, "", $2); print $2 }' "$TMP/smoke.h")
    [[ $code == 201 && $replayed == false ]] || { cat "$TMP/smoke.json"; echo; die "smoke create answered $code (Idempotent-Replayed: $replayed)"; }
    code=$(smoke)
    replayed=$(awk -F': *' 'tolower($1) == "idempotent-replayed" { gsub(/\r/, "", $2); print $2 }' "$TMP/smoke.h")
    [[ $code == 201 && $replayed == true ]] || { cat "$TMP/smoke.json"; echo; die "smoke replay answered $code (Idempotent-Replayed: $replayed)"; }
    log "smoke test passed (201 created, 201 replayed)"
}

start_service "$OUT/service.log"
seed_and_smoke

REDIS_PID=""         # set during the replay+redis phase: run_wrk then measures Redis CPU too
TOTAL_NEW=1          # 201 with Idempotent-Replayed: false, over every create-type request
TOTAL_UNANSWERED=0   # requests whose outcome the client never learnt
ROWS="$OUT/rows.tsv" # one line per measured run
: > "$ROWS"
declare -A RES
declare -A GROWTH_DELETED
JIT_SETTLED=()       # per phase: how long its JIT took to settle after the warm-up

# With PEER=1 the peer runs beside the service, on a port and a database of its own, and the two
# are measured alternately, row by row: a machine whose speed drifts over minutes then drifts for
# both alike (measured one after the other, minutes apart, the two services shared no sitting:
# bench/README.md, "Two runs beside the peer with the JIT settled"). use_target makes one of them
# the current target: the globals below are that target's, kept for the other in TARGET_STATE.
TARGET_VARS=(PORT BASE SVC_PID SVC_LOG DB TOTAL_NEW TOTAL_UNANSWERED PRIMED_NEW PRIMED_ERRORS REPLAY_NEW)
TARGETS=(service)
use_target() {
    local v
    [[ $1 != "$TARGET" ]] || return 0
    for v in "${TARGET_VARS[@]}"; do TARGET_STATE[$TARGET.$v]=${!v:-}; done
    TARGET=$1
    for v in "${TARGET_VARS[@]}"; do printf -v "$v" '%s' "${TARGET_STATE[$TARGET.$v]:-}"; done
}
if ((PEER)); then
    use_target peer
    PORT=$(free_port "${TARGET_STATE[service.PORT]}")
    BASE="http://127.0.0.1:$PORT"
    DB="${MAIN_DB}_peer"
    qpg -c "CREATE DATABASE $DB" >/dev/null
    PEER_DB=$DB
    log "created database $DB for the peer"
    start_peer "$OUT/peer.log"
    seed_and_smoke
    TOTAL_NEW=1 TOTAL_UNANSWERED=0
    use_target service
    TARGETS+=(peer)
fi

# ------------------------------------------------------------------------------------------
# wrk runs
# ------------------------------------------------------------------------------------------
checkpoint() { q -c 'CHECKPOINT'; }

# The relay publishes each create's event after the fact. Left running into the next window, it
# bills that window's requests for the previous window's events (a replay window paid for 12 % of
# its CPU that way). So each window starts with the outbox drained: it waits while the count of
# unpublished rows falls, at most OUTBOX_SETTLE_SECONDS, and goes on (saying so) once it stalls for
# 5 s, which a broker that is down would do. It is the service's outbox, also before the peer's
# windows (the peer has none): the service's relay would bill them too.
outbox_settled() {
    local left last stalled_since=$SECONDS started=$SECONDS
    left=$(DB=$MAIN_DB q -c 'SELECT count(*) FROM outbox_event WHERE published_at IS NULL')
    last=$left
    while ((left > 0)); do
        if ((SECONDS - started >= OUTBOX_SETTLE_SECONDS || SECONDS - stalled_since >= 5)); then
            log "outbox: $left events still unpublished after $((SECONDS - started)) s; measuring anyway"
            return 0
        fi
        sleep 0.5
        left=$(DB=$MAIN_DB q -c 'SELECT count(*) FROM outbox_event WHERE published_at IS NULL')
        ((left >= last)) || stalled_since=$SECONDS
        last=$left
    done
    ((SECONDS - started < 1)) || log "outbox: drained in $((SECONDS - started)) s before the next window"
}

# run_wrk LABEL SCRIPT CONNECTIONS WINDOW [key=value ...]: sets RES[...] from the BENCH line.
run_wrk() {
    local label=$1 script=$2 conns=$3 window=$4
    shift 4
    local out="$OUT/wrk-$label.txt" s0 s1 p0 p1 r0="" r1="" b0 b1 rc=0 kv
    outbox_settled
    checkpoint
    service_alive
    s0=$(proc_ticks "$SVC_PID")
    p0=$(pg_ticks)
    b0=$(box_ticks)
    [[ -z $REDIS_PID ]] || r0=$(proc_ticks "$REDIS_PID" 2>/dev/null || true)
    # wrk's main thread sleeps for all of -d. Each script thread prints "DRAINED thread N" once
    # its window is over and every request it sent has its answer; then SIGINT ends wrk early
    # (wrk prints its report and calls done()). -d (window + GRACE_SECONDS) is only the bound.
    wrk -t "$THREADS" -c "$conns" -d "$((window + GRACE_SECONDS))s" --timeout "${WRK_TIMEOUT}s" --latency \
        -s "$BENCH_DIR/lua/$script.lua" "$BASE/api/orders" -- \
        "prefix=$KEY_RUN-$label" "token=$TOKEN" "window=$window" "skus=$SKUS" "hot=$HOT_SKU" \
        "nthreads=$THREADS" "$@" > "$out" 2>&1 &
    WRK_PID=$!
    local limit=$((SECONDS + window + GRACE_SECONDS + 30)) signalled=0 drained
    while kill -0 "$WRK_PID" 2>/dev/null; do
        drained=$(grep -c '^DRAINED ' "$out" 2>/dev/null || true)
        if ((!signalled && drained >= THREADS)); then
            kill -INT "$WRK_PID" 2>/dev/null || true
            signalled=1
        fi
        if ((SECONDS > limit)); then
            echo "wrk $label did not end in time: killing it" >&2
            kill -KILL "$WRK_PID" 2>/dev/null || true
            break
        fi
        sleep 0.1
    done
    wait "$WRK_PID" || rc=$?
    WRK_PID=""
    s1=$(proc_ticks "$SVC_PID")
    p1=$(pg_ticks)
    b1=$(box_ticks)
    [[ -z $REDIS_PID ]] || r1=$(proc_ticks "$REDIS_PID" 2>/dev/null || true)
    service_alive
    if ((rc != 0)) || ! grep -q '^BENCH ' "$out"; then
        cat "$out"
        die "wrk $label failed (exit $rc), see $out"
    fi
    RES=()
    for kv in $(grep '^BENCH ' "$out" | tail -n 1 | cut -d' ' -f2-); do
        RES[${kv%%=*}]=${kv#*=}
    done
    RES[svc_ticks]=$((s1 - s0))
    RES[pg_ticks]=$([[ -n $p0 ]] && echo $((p1 - p0)) || echo "")
    RES[redis_ticks]=$([[ -n $r0 && -n $r1 ]] && echo $((r1 - r0)) || echo "")
    RES[rss]=$(vm_hwm_mib "$SVC_PID")
    RES[idle]=$(idle_pct "$b0" "$b1")
    # Errors: every answer other than 201 (or a 201 without Idempotent-Replayed), every request
    # left without an answer (read/write error or still in flight at the end: outcome unknown),
    # every failed connect and every answer slower than --timeout.
    local n=0 detail=""
    n=$((RES[non201] + RES[unmarked201] + RES[unanswered] + RES[connect] + RES[timeout]))
    [[ ${RES[codes]} == - ]] || detail+=" status ${RES[codes]}"
    ((RES[unmarked201] == 0)) || detail+=" 201-without-Idempotent-Replayed:${RES[unmarked201]}"
    ((RES[unanswered] == 0)) || detail+=" unanswered:${RES[unanswered]} (socket read errors ${RES[read]}, write errors ${RES[write]})"
    ((RES[connect] == 0)) || detail+=" connect:${RES[connect]}"
    ((RES[timeout] == 0)) || detail+=" timeout>${WRK_TIMEOUT}s:${RES[timeout]}"
    RES[errors]=$n
    RES[error_detail]=${detail# }
    log "$(printf '%-14s c=%-3s %9.1f req/s  p50 %s us  p99 %s us  201 new %s  replayed %s  idle %s %%  errors %s %s' \
        "$label" "$conns" "${RES[rps]}" "${RES[p50_us]}" "${RES[p99_us]}" "${RES[new201]}" "${RES[replay201]}" \
        "${RES[idle]}" "$n" "${RES[error_detail]}")"
}

# add_row SCENARIO CONNECTIONS: the current RES as a table row.
add_row() {
    local svc_cpu pg_cpu
    svc_cpu=$(ms_per "${RES[svc_ticks]}" "${RES[received]}")
    pg_cpu=$(ms_per "${RES[pg_ticks]}" "${RES[received]}")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "${RES[rps]}" \
        "$(awk -v u="${RES[p50_us]}" 'BEGIN { printf "%.2f", u / 1000 }')" \
        "$(awk -v u="${RES[p99_us]}" 'BEGIN { printf "%.2f", u / 1000 }')" \
        "${RES[errors]}" "${RES[error_detail]:--}" "${RES[rss]}" "$svc_cpu" "$pg_cpu" \
        "${RES[new201]}" "${RES[replay201]}" "${RES[idle]}" >> "$ROWS"
}

count_new() {
    TOTAL_NEW=$((TOTAL_NEW + RES[new201]))
    TOTAL_UNANSWERED=$((TOTAL_UNANSWERED + RES[unanswered]))
}

# jit_settled WHO TAG: after the warm-up, creates at the first measured connection count in 10 s
# steps until the JVM's JIT compilers used under 3 % of a core in a step, at most
# JIT_SETTLE_SECONDS. The compilers had not finished after 60 s at 64 connections: in the 16
# connection row that followed they used 0.03-0.10 ms of CPU per create, 10-20 % of the service's
# CPU in that row, and took it from PostgreSQL on the same 2 cores (bench/README.md, "Issue 17: the
# JIT settles before the first row, the peer row by row"). The same rule for the service and the peer.
jit_settled() {
    local who=$1 tag=$2 c=${CONNECTIONS%% *}
    if jit_settle "$SVC_PID" 10 "$JIT_SETTLE_SECONDS" jit_settle_window "$tag" "$c"; then
        log "${who}JIT settled after $JIT_WAITED s more of creates at $c connections (compilers $JIT_LAST_MS ms of CPU in the last 10 s)"
        JIT_SETTLED+=("${who:-service }$JIT_WAITED s")
    else
        log "${who}JIT still compiling after $JIT_WAITED s more of creates at $c connections; measuring anyway"
        JIT_SETTLED+=("${who:-service }not settled after $JIT_WAITED s")
    fi
}
# jit_settle_window TAG CONNECTIONS WAITED: one 10 s window of creates while the JIT settles.
jit_settle_window() {
    run_wrk "$1jit-settle-$3" create "$2" 10
    count_new
}

# who: the current target's prefix of row names ("peer "), tag: of run labels ("peer-").
who() { [[ $TARGET == service ]] || echo "$TARGET "; }
tag() { [[ $TARGET == service ]] || echo "$TARGET-"; }

# next_turn: sets TURN_ORDER to the targets in the order of the next row, alternating (service then
# peer, then peer then service, ...), so neither always goes first after the other's window.
TURN=0
TURN_ORDER=()
next_turn() {
    local i
    TURN=$((TURN + 1))
    TURN_ORDER=()
    for ((i = 0; i < ${#TARGETS[@]}; i++)); do
        if ((TURN % 2 == 1)); then TURN_ORDER+=("${TARGETS[i]}"); else TURN_ORDER=("${TARGETS[i]}" "${TURN_ORDER[@]}"); fi
    done
}

# run_scenarios: warm-up, then create, create-hot, replay and mixed at every connection count, on
# every target (the service, and the peer with PEER=1), alternating target by target within each
# row. Per target: sets PRIMED_NEW, PRIMED_ERRORS and REPLAY_NEW; counts into TOTAL_NEW.
run_scenarios() {
    local t scenario c
    if ((WARMUP_SECONDS > 0)); then
        for t in "${TARGETS[@]}"; do
            use_target "$t"
            log "$(who)warm-up: create, 64 connections, $WARMUP_SECONDS s"
            run_wrk "$(tag)warmup" create 64 "$WARMUP_SECONDS"
            count_new
            jit_settled "$(who)" "$(tag)"
        done
    fi

    for scenario in create create-hot; do
        for c in $CONNECTIONS; do
            next_turn
            for t in "${TURN_ORDER[@]}"; do
                use_target "$t"
                run_wrk "$(tag)$scenario-c$c" "$scenario" "$c" "$DURATION"
                count_new
                add_row "$(who)$scenario" "$c"
            done
        done
    done

    for t in "${TARGETS[@]}"; do
        use_target "$t"
        log "$(who)replay: creating $REPLAY_KEYS keys"
        run_wrk "$(tag)replay-prime" replay 16 120 "count=$REPLAY_KEYS" mode=prime
        count_new
        PRIMED_NEW=${RES[new201]}
        PRIMED_ERRORS=${RES[errors]}
        REPLAY_NEW=0
    done
    for c in $CONNECTIONS; do
        next_turn
        for t in "${TURN_ORDER[@]}"; do
            use_target "$t"
            # The replay runs use the primed keys: same prefix as the prime run.
            run_wrk "$(tag)replay-c$c" replay "$c" "$DURATION" "count=$REPLAY_KEYS" mode=replay "prefix=$KEY_RUN-$(tag)replay-prime"
            count_new
            REPLAY_NEW=$((REPLAY_NEW + RES[new201]))
            add_row "$(who)replay" "$c"
        done
    done

    for c in $CONNECTIONS; do
        next_turn
        for t in "${TURN_ORDER[@]}"; do
            use_target "$t"
            run_wrk "$(tag)mixed-c$c" mixed "$c" "$DURATION"
            count_new
            add_row "$(who)mixed" "$c"
        done
    done
    use_target service
}

run_scenarios
if ((PEER)); then
    # The peer's part is done: its counts are kept for the checks, and it stops before the
    # service's growth and Redis phases.
    use_target peer
    PEER_TOTAL_NEW=$TOTAL_NEW PEER_TOTAL_UNANSWERED=$TOTAL_UNANSWERED
    PEER_PRIMED_NEW=$PRIMED_NEW PEER_PRIMED_ERRORS=$PRIMED_ERRORS PEER_REPLAY_NEW=$REPLAY_NEW
    stop_service
    use_target service
fi

# ------------------------------------------------------------------------------------------
# Growth: the create scenario again with GROWTH_RECORDS live records, some expiring as it runs
# ------------------------------------------------------------------------------------------
# idempotency_cleanup_deleted_total of the running service.
GROWTH_REFERENCE="create, before the prefill"
cleanup_deleted() {
    curl -fsS --max-time 10 "$BASE/q/metrics" \
        | awk '/^idempotency_cleanup_deleted_total/ { v = $2; sub(/ .*/, "", v); n += v } END { printf "%d\n", n }'
}
if ((GROWTH_RECORDS > 0)); then
    # The growth rows are divided by creates measured just before the prefill, on the same service
    # with the peer stopped: the create rows above ran minutes earlier, beside the peer, and the
    # machine's speed drifts by more than the growth goal's margin over that time.
    for c in $CONNECTIONS; do
        run_wrk "growth-reference-create-c$c" create "$c" "$DURATION"
        count_new
        add_row "$GROWTH_REFERENCE" "$c"
    done
    # Expiries spread evenly over the next 24 h (a day of GROWTH_RECORDS / 86400 creates per
    # second), after one minute's backlog already expired: the cleanup works the whole time.
    log "growth: prefilling $GROWTH_RECORDS idempotency records (SQL)"
    q -c "INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, http_status,
                                          response_json, response_location, resource_id, created_at, updated_at, expires_at)
          SELECT 1000000 + g % 100000, 'CREATE_ORDER', 'prefill-' || g, repeat('f', 64), 'SUCCEEDED', 201,
                 '{\"orderId\":' || g || ',\"orderNo\":\"ORD-PREFILL-' || g || '\",\"status\":\"CREATED\",\"skuId\":1,\"quantity\":1}',
                 '/api/orders/' || g, g, now() - interval '1 day', now() - interval '1 day',
                 now() - interval '1 minute' + (g::float8 / $GROWTH_RECORDS) * interval '24 hours'
            FROM generate_series(1, $GROWTH_RECORDS) g"
    q -c "VACUUM ANALYZE idempotency_record"
    log "growth: $(q -c "SELECT count(*) FROM idempotency_record") records, $(q -c "SELECT pg_size_pretty(pg_total_relation_size('idempotency_record'))") with indexes"
    # The prefill leaves shared_buffers holding its own pages, not the creates' working set, which
    # a day of creates would keep warm: one unmeasured window brings it back, so the growth rows
    # measure the table's size rather than a cold cache.
    first_c=${CONNECTIONS%% *}
    run_wrk "growth-warmup-c$first_c" create "$first_c" "$DURATION"
    count_new
    for c in $CONNECTIONS; do
        d0=$(cleanup_deleted)
        t0=$SECONDS
        run_wrk "growth-create-c$c" create "$c" "$DURATION"
        count_new
        d1=$(cleanup_deleted)
        add_row "create, $GROWTH_RECORDS records" "$c"
        GROWTH_DELETED[$c]=$(awk -v d=$((d1 - d0)) -v t=$((SECONDS - t0)) 'BEGIN { printf "%.0f", (t > 0 ? d / t : 0) }')
        log "growth c=$c: the cleanup deleted $((d1 - d0)) expired records in $((SECONDS - t0)) s (${GROWTH_DELETED[$c]}/s)"
    done
fi

# ------------------------------------------------------------------------------------------
# replay+redis: the replay scenario again, on a service restarted with the Redis fast layer
# ------------------------------------------------------------------------------------------
# idempotency_cache_requests_total{result=...} of the running service, as "hit miss error bypass".
cache_counts() {
    curl -fsS --max-time 10 "$BASE/q/metrics" | awk '
        /^idempotency_cache_requests_total\{/ {
            r = $0; sub(/.*result="/, "", r); sub(/".*/, "", r)
            v = $0; sub(/^[^}]*\} */, "", v); sub(/ .*/, "", v)   # the value, not an exemplar after it
            n[r] += v; seen = 1 }
        END { if (!seen) exit 1
              printf "%d %d %d %d\n", n["hit"], n["miss"], n["error"], n["bypass"] }'
}
# The Redis server's pid, for its CPU: from INFO, if that pid is a redis-server this /proc shows.
redis_pid() {
    local pid
    pid=$(redis_cli info server 2>/dev/null | awk -F: '/^process_id:/ { sub(/\r$/, "", $2); print $2 }')
    if [[ -n $pid && $(cat "/proc/$pid/comm" 2>/dev/null) == redis-server* && -r /proc/$pid/stat ]]; then
        echo "$pid"
    fi
}

if ((REDIS)); then
    log "replay+redis: restarting the service with the Redis fast layer (Redis $REDIS_HOST:$REDIS_PORT, database $REDIS_DB)"
    redis_up || die "Redis at $REDIS_HOST:$REDIS_PORT stopped answering"
    stop_service
    [[ $(redis_cli -n "$REDIS_DB" flushdb 2>&1) == OK ]] || die "FLUSHDB of Redis database $REDIS_DB failed"
    start_service "$OUT/service-redis.log" IDEMPOTENCY_REDIS_ENABLED=true \
        QUARKUS_REDIS_HOSTS="redis://$REDIS_HOST:$REDIS_PORT/$REDIS_DB"
    # The fast layer's first calls (connecting, cold code) can outlive its 50 ms bound, and 5
    # failures in a row open its breaker for 5 s: then the fill below would skip Redis. So first
    # replay the smoke test's key, one request at a time, until Redis has answered one with a hit.
    redis_path=0
    for _ in $(seq 1 30); do
        code=$(smoke)
        replayed=$(awk -F': *' 'tolower($1) == "idempotent-replayed" { gsub(/\r/, "", $2); print $2 }' "$TMP/smoke.h")
        [[ $code == 201 && $replayed == true ]] || { cat "$TMP/smoke.json"; echo; die "smoke replay (Redis on) answered $code (Idempotent-Replayed: $replayed)"; }
        read -r hit0 _ _ _ < <(cache_counts) || die "no idempotency_cache_requests_total in $BASE/q/metrics"
        if ((hit0 > 0)); then redis_path=1; break; fi
        sleep 1
    done
    ((redis_path)) || echo "WARNING: no Redis cache hit within 30 s of single replays (see $SVC_LOG); going on" >&2
    read -r _ _ err0 byp0 < <(cache_counts) || die "no idempotency_cache_requests_total in $BASE/q/metrics"
    log "replay+redis: Redis path warm (smoke key: $hit0 hits, $err0 errors, $byp0 bypassed)"
    # Each primed key once: the first replay of a key with Redis on misses and fills the cache.
    # On only $THREADS connections: the JVM is still cold, and timed-out Redis calls would open
    # the breaker and leave keys unfilled (the warm-up would still fill them, as misses).
    # (Labels, and so the keys' prefixes and file names, spell it "replay-redis".)
    run_wrk replay-redis-fill replay "$THREADS" 120 "count=$REPLAY_KEYS" mode=prime "prefix=$KEY_RUN-replay-prime"
    count_new
    REPLAY_NEW=$((REPLAY_NEW + RES[new201]))
    FILL_REPLAYED=${RES[replay201]}
    FILL_ERRORS=${RES[errors]}
    read -r hit1 miss1 err1 byp1 < <(cache_counts) || die "no idempotency_cache_requests_total in $BASE/q/metrics"
    log "replay+redis fill: $FILL_REPLAYED of $REPLAY_KEYS keys replayed, $FILL_ERRORS errors; cache hits $((hit1 - hit0)), misses $miss1, errors $((err1 - err0)), bypassed $((byp1 - byp0)); $(redis_cli -n "$REDIS_DB" dbsize) keys in Redis database $REDIS_DB"
    # Warm-up on 16 connections (not 64): the first measured run must not start while a breaker
    # opened by the warm-up is still open.
    redis_warmup=$((WARMUP_SECONDS < 20 ? WARMUP_SECONDS : 20))
    if ((redis_warmup > 0)); then
        log "replay+redis warm-up: replay, 16 connections, $redis_warmup s"
        run_wrk replay-redis-warmup replay 16 "$redis_warmup" "count=$REPLAY_KEYS" mode=replay "prefix=$KEY_RUN-replay-prime"
        count_new
        REPLAY_NEW=$((REPLAY_NEW + RES[new201]))
    fi
    read -r CACHE_HIT0 CACHE_MISS0 CACHE_ERROR0 CACHE_BYPASS0 < <(cache_counts) \
        || die "no idempotency_cache_requests_total in $BASE/q/metrics"
    REDIS_PID=$(redis_pid)
    [[ -n $REDIS_PID ]] || echo "WARNING: cannot read the redis-server's /proc entry: Redis CPU is not measured" >&2
    REDIS_REQUESTS=0
    for c in $CONNECTIONS; do
        run_wrk "replay-redis-c$c" replay "$c" "$DURATION" "count=$REPLAY_KEYS" mode=replay "prefix=$KEY_RUN-replay-prime"
        count_new
        REPLAY_NEW=$((REPLAY_NEW + RES[new201]))
        REDIS_REQUESTS=$((REDIS_REQUESTS + RES[received]))
        add_row replay+redis "$c"
        log "replay+redis   c=$c: Redis CPU $(ms_per "${RES[redis_ticks]}" "${RES[received]}") ms/req (redis-server pid ${REDIS_PID:--}, all its clients)"
    done
    REDIS_PID=""
    read -r CACHE_HIT CACHE_MISS CACHE_ERROR CACHE_BYPASS < <(cache_counts) \
        || die "no idempotency_cache_requests_total in $BASE/q/metrics"
    # Over the measured runs only (the counters since the restart are in the check line too).
    M_HIT=$((CACHE_HIT - CACHE_HIT0))
    M_MISS=$((CACHE_MISS - CACHE_MISS0))
    M_ERROR=$((CACHE_ERROR - CACHE_ERROR0))
    M_BYPASS=$((CACHE_BYPASS - CACHE_BYPASS0))
    log "replay+redis measured runs: $REDIS_REQUESTS requests; cache hits $M_HIT, misses $M_MISS, errors $M_ERROR, bypassed $M_BYPASS (since the restart: hit $CACHE_HIT, miss $CACHE_MISS, error $CACHE_ERROR, bypass $CACHE_BYPASS)"
fi

# ------------------------------------------------------------------------------------------
# The ceiling: pgbench running exactly the SQL of one order creation; then the floor: the least
# SQL that writes a create's four rows (bench/floor.sql), which no design can go under
# ------------------------------------------------------------------------------------------
# -l (a line per transaction, for p50/p99) costs the ceiling a few per cent: only on request.
PGBENCH_LOG_ARGS=()
declare -A LAT_AVG
for script in ceiling floor; do
for c in $CONNECTIONS; do
    out="$OUT/pgbench-$script-c$c.txt"
    PGBENCH_LOG_ARGS=()
    [[ $CEILING_LATENCY != 1 ]] || PGBENCH_LOG_ARGS=(-l --log-prefix="$OUT/pgbench-log-c$c")
    checkpoint
    kids=$(pg_children)
    p0=$(pg_ticks)
    b0=$(box_ticks)
    rc=0
    timeout --kill-after=10 $((DURATION + 120)) \
        pgbench -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -n -M prepared -f "$BENCH_DIR/$script.sql" \
        -T "$DURATION" -c "$c" -j "$THREADS" "${PGBENCH_LOG_ARGS[@]}" "$DB" > "$out" 2>&1 || rc=$?
    idle=$(idle_pct "$b0" "$(box_ticks)")
    pg_settle "$kids"
    p1=$(pg_ticks)
    tps=$(awk '/^tps = / { print $3; exit }' "$out")
    done_tx=$(awk -F': ' '/^number of transactions actually processed/ { print $2; exit }' "$out")
    failed_tx=$(awk '/^number of failed transactions/ { print $5; exit }' "$out")
    lat_avg=$(awk '/^latency average = / { print $4; exit }' "$out")
    aborted=$(grep -c 'aborted' "$out" || true)
    if [[ -z $tps || -z $done_tx ]]; then
        cat "$out"
        die "pgbench -c $c failed (exit $rc), see $out"
    fi
    errors=$((${failed_tx:-0} + aborted))
    detail="-"
    ((rc == 0)) || detail="pgbench exit $rc"
    ((aborted == 0)) || detail="$aborted aborted client(s), see $out"
    # Transaction latency percentiles from the per-transaction log (3rd field, microseconds),
    # when CEILING_LATENCY=1 made pgbench write one.
    read -r p50 p99 < <(cat "$OUT"/pgbench-log-c"$c".* 2>/dev/null | awk '$3 ~ /^[0-9]+$/ { print $3 }' | sort -n | awk '
        { v[NR] = $1 }
        END { if (NR == 0) { print "- -"; exit }
              i = int(NR * 0.50); if (i < NR * 0.50) i++; if (i < 1) i = 1
              j = int(NR * 0.99); if (j < NR * 0.99) j++; if (j < 1) j = 1
              printf "%.2f %.2f\n", v[i] / 1000, v[j] / 1000 }')
    rm -f "$OUT"/pgbench-log-c"$c".*
    pg_cpu=$(ms_per "$([[ -n $p0 ]] && echo $((p1 - p0)))" "$done_tx")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$script (pgbench)" "$c" \
        "$(printf '%.1f' "$tps")" "$p50" "$p99" "$errors" "$detail" "-" "-" "$pg_cpu" "-" "-" "$idle" >> "$ROWS"
    [[ $script != ceiling ]] || LAT_AVG[$c]=$lat_avg
    log "$(printf '%-14s c=%-3s %9.1f tps    latency avg %s ms  p50 %s ms  p99 %s ms  errors %s  PostgreSQL CPU %s ms/tx' "pgbench $script" "$c" "$tps" "${lat_avg:--}" "$p50" "$p99" "$errors" "$pg_cpu")"
done
done

# ------------------------------------------------------------------------------------------
# Table
# ------------------------------------------------------------------------------------------
# col_of SCENARIO CONNECTIONS K: column K of that row (3 req/s, 5 p99, 9 service CPU, 10 PostgreSQL CPU, 13 idle).
col_of() { awk -F'\t' -v s="$1" -v c="$2" -v k="$3" '$1 == s && $2 == c { print $k; exit }' "$ROWS"; }
rps_of() { col_of "$1" "$2" 3; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }

RESULTS="$OUT/results.md"
{
    echo "# Benchmark $RUN_ID"
    echo
    echo "- commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$( [[ -n $(git -C "$ROOT" status --porcelain -- src pom.xml 2>/dev/null) ]] && echo ' (src/ has uncommitted changes)'); jar built $JAR_TIME"
    echo "- PostgreSQL $PG_VERSION, fsync=$FSYNC, synchronous_commit=$SYNC_COMMIT; $(nproc) CPUs"
    echo "- $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1); pool max size ${POOL:-service default}; owners' share (overload.owner.max-in-flight) $OWNER_SHARE (OWNER_SHARE)${APP_NICE:+; the service and the peer at nice $APP_NICE (APP_NICE)}"
    ((PEER)) && echo "- peer rows (\`peer ...\`): $PEER_JAR, the same scenarios, key and JVM, on a fresh database of its own, running beside the service; each row measured on both, one right after the other, the first of the two alternating from row to row"
    echo "- DURATION=${DURATION}s per run, WARMUP_SECONDS=$WARMUP_SECONDS, wrk -t $THREADS --latency, pgbench -n -M prepared -j $THREADS${PGBENCH_LOG_ARGS:+ -l}"
    ((${#JIT_SETTLED[@]} == 0)) || echo "- JIT settled after the warm-up (JIT_SETTLE_SECONDS=$JIT_SETTLE_SECONDS, creates at ${CONNECTIONS%% *} connections until the compilers used under 3 % of a core in 10 s): $(IFS=,; echo "${JIT_SETTLED[*]}" | sed 's/,/, /g')"
    if ((REDIS)); then
        echo "- replay+redis rows: the service restarted with IDEMPOTENCY_REDIS_ENABLED=true, Redis ${REDIS_VERSION:-?} at $REDIS_HOST:$REDIS_PORT database $REDIS_DB (flushed first), each primed key replayed once to fill the cache, then ${redis_warmup}s of replay warm-up"
    else
        echo "- REDIS=0: no replay+redis phase"
    fi
    echo
    echo "| scenario | conns | req/s | p50 ms | p99 ms | errors | service peak RSS MiB | service CPU ms/req | PostgreSQL CPU ms/req | 201 new | 201 replayed | machine idle % |"
    echo "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"
    while IFS=$'\t' read -r s c rps p50 p99 err det rss scpu pcpu n r idle; do
        e=$err
        [[ $det == - ]] || e="$err ($det)"
        echo "| $s | $c | $rps | $p50 | $p99 | $e | $rss | $scpu | $pcpu | $n | $r | $idle |"
    done < <(awk -F'\t' '$1 !~ /^peer / && $1 !~ /\(pgbench\)$/' "$ROWS"  # ours, the peer's, then pgbench's
             awk -F'\t' '$1 ~ /^peer /' "$ROWS"
             awk -F'\t' '$1 ~ /\(pgbench\)$/' "$ROWS")
    echo
    for c in $CONNECTIONS; do
        echo "- create at $c connections: $(rps_of create "$c") req/s; ceiling (pgbench): $(rps_of 'ceiling (pgbench)' "$c") tps" \
            "(transaction latency average ${LAT_AVG[$c]:--} ms); replay: $(rps_of replay "$c") req/s"
    done
    echo
    pg_cpu_of() { col_of "$1" "$2" 10; }
    for c in $CONNECTIONS; do
        echo "- PostgreSQL CPU at $c connections: $(pg_cpu_of create "$c") ms per create through the service;" \
            "$(pg_cpu_of 'ceiling (pgbench)' "$c") ms per transaction of our SQL (ceiling);" \
            "$(pg_cpu_of 'floor (pgbench)' "$c") ms for the four rows in one statement (floor, $(rps_of 'floor (pgbench)' "$c") tps)"
    done
    echo
    line="**create ÷ ceiling:"
    sep=" "
    for c in $CONNECTIONS; do
        line+="$sep$(ratio "$(rps_of create "$c")" "$(rps_of 'ceiling (pgbench)' "$c")") at $c connections"
        sep=", "
    done
    line+=" · replay ÷ create at $max_c connections: $(ratio "$(rps_of replay "$max_c")" "$(rps_of create "$max_c")")**"
    echo "$line"
    if ((REDIS)); then
        echo
        for c in $CONNECTIONS; do
            echo "- replay+redis ÷ replay at $c connections: $(ratio "$(rps_of replay+redis "$c")" "$(rps_of replay "$c")")"
        done
    fi
    if ((GROWTH_RECORDS > 0)); then
        echo
        for c in $CONNECTIONS; do
            g="create, $GROWTH_RECORDS records"
            echo "- growth at $c connections: create $(rps_of "$g" "$c") req/s with $GROWTH_RECORDS records (the cleanup deleting ${GROWTH_DELETED[$c]:-?} expired records/s) ÷ $(rps_of "$GROWTH_REFERENCE" "$c") req/s just before the prefill = **$(ratio "$(rps_of "$g" "$c")" "$(rps_of "$GROWTH_REFERENCE" "$c")")**; p99 $(col_of "$g" "$c" 5) ms ÷ $(col_of "$GROWTH_REFERENCE" "$c" 5) ms"
        done
    fi
    if ((PEER)); then
        echo
        echo "## Side by side with the peer (the seed's design, \`PEER=1\`)"
        echo
        echo "| scenario | conns | ours req/s | peer req/s | ours ÷ peer | ours p99 ms | peer p99 ms | ours service CPU ms/req | peer service CPU ms/req | ours PostgreSQL CPU ms/req | peer PostgreSQL CPU ms/req | ours / peer machine idle % |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        for scenario in create create-hot mixed replay; do
            for c in $CONNECTIONS; do
                echo "| $scenario | $c | $(rps_of "$scenario" "$c") | $(rps_of "peer $scenario" "$c") | **$(ratio "$(rps_of "$scenario" "$c")" "$(rps_of "peer $scenario" "$c")")** | $(col_of "$scenario" "$c" 5) | $(col_of "peer $scenario" "$c" 5) | $(col_of "$scenario" "$c" 9) | $(col_of "peer $scenario" "$c" 9) | $(col_of "$scenario" "$c" 10) | $(col_of "peer $scenario" "$c" 10) | $(col_of "$scenario" "$c" 13) / $(col_of "peer $scenario" "$c" 13) |"
            done
        done
    fi
} > "$RESULTS"

# ------------------------------------------------------------------------------------------
# Correctness on the database
# ------------------------------------------------------------------------------------------
FAILS=0
check() { # PASS-condition(0/1) message
    if [[ $1 == 1 ]]; then echo "PASS  $2"; else echo "FAIL  $2"; FAILS=$((FAILS + 1)); fi
}
# ledger_checks [WHO]: the database $DB against what the clients were told (TOTAL_NEW, ...);
# WHO ("peer") prefixes the check lines.
ledger_checks() {
    local who=${1:+$1: }
    svc_orders=$(q -c "SELECT count(*) FROM purchase_order WHERE order_no NOT LIKE 'PG-%'")
    pg_orders=$(q -c "SELECT count(*) FROM purchase_order WHERE order_no LIKE 'PG-%'")
    IFS='|' read -r succeeded linked distinct_orders not_succeeded < <(q -c "
        SELECT count(*) FILTER (WHERE r.status = 'SUCCEEDED'),
               count(o.id) FILTER (WHERE r.status = 'SUCCEEDED'),
               count(DISTINCT o.id) FILTER (WHERE r.status = 'SUCCEEDED'),
               count(*) FILTER (WHERE r.status <> 'SUCCEEDED')
          FROM idempotency_record r
          LEFT JOIN purchase_order o
            ON o.id = r.resource_id AND o.owner_id = r.owner_id AND o.order_no NOT LIKE 'PG-%'
         WHERE r.operation = 'CREATE_ORDER' AND r.idempotency_key NOT LIKE 'pg-%'
               AND r.idempotency_key NOT LIKE 'prefill-%'")
    IFS='|' read -r taken ordered skus_off orphan < <(q -c "
        SELECT coalesce(sum($INITIAL_STOCK::bigint - i.available), 0),
               (SELECT coalesce(sum(quantity), 0) FROM purchase_order),
               count(*) FILTER (WHERE $INITIAL_STOCK::bigint - i.available <> coalesce(o.q, 0)),
               (SELECT count(*) FROM purchase_order p WHERE NOT EXISTS (SELECT 1 FROM sku_inventory s WHERE s.sku_id = p.sku_id))
          FROM sku_inventory i
          LEFT JOIN (SELECT sku_id, sum(quantity) AS q FROM purchase_order GROUP BY sku_id) o USING (sku_id)")
    hint=""
    if [[ $svc_orders != "$TOTAL_NEW" ]] && ((TOTAL_UNANSWERED > 0)); then
        hint=" - $TOTAL_UNANSWERED request(s) got no answer, so their outcome is unknown to the client"
        ((svc_orders >= TOTAL_NEW && svc_orders <= TOTAL_NEW + TOTAL_UNANSWERED)) \
            && hint+=" (the difference is within that)" || hint+=" (the difference is NOT within that)"
    fi
    check "$([[ $svc_orders == "$TOTAL_NEW" ]] && echo 1 || echo 0)" \
        "${who}orders created by the service ($svc_orders, order_no not 'PG-%') = 201 Idempotent-Replayed:false counted ($TOTAL_NEW, warm-up, smoke test and all create-type runs)$hint"
    check "$([[ $succeeded == "$linked" && $linked == "$distinct_orders" && $distinct_orders == "$svc_orders" ]] && echo 1 || echo 0)" \
        "${who}one order per key: SUCCEEDED CREATE_ORDER records $succeeded, pointing to an order of their owner $linked, distinct orders $distinct_orders, service orders $svc_orders"
    check "$([[ $taken == "$ordered" && $skus_off == 0 && $orphan == 0 ]] && echo 1 || echo 0)" \
        "${who}stock ledger exact: stock taken $taken = quantity ordered $ordered (incl. $pg_orders pgbench orders); SKUs off: $skus_off; orders on unknown SKUs: $orphan"
    check "$([[ $PRIMED_NEW == "$REPLAY_KEYS" && $PRIMED_ERRORS == 0 ]] && echo 1 || echo 0)" \
        "${who}replay keys primed: $PRIMED_NEW of $REPLAY_KEYS created, $PRIMED_ERRORS errors"
    check "$([[ $REPLAY_NEW == 0 ]] && echo 1 || echo 0)" \
        "${who}replay runs created nothing new: $REPLAY_NEW 201 Idempotent-Replayed:false$( [[ -z $who ]] && ((REDIS)) && echo ' (replay, and replay+redis with its fill and warm-up)')"
}

{
    echo
    echo "## Correctness"
    echo
    echo '```'
    ledger_checks
    if ((REDIS)); then
        check "$( ((FILL_REPLAYED == REPLAY_KEYS && FILL_ERRORS == 0)) && echo 1 || echo 0)" \
            "replay+redis cache fill (each primed key once, Redis on): $FILL_REPLAYED of $REPLAY_KEYS replayed, $FILL_ERRORS errors"
        check "$( ((M_HIT >= REDIS_REQUESTS && REDIS_REQUESTS > 0 && M_ERROR + M_BYPASS == 0)) && echo 1 || echo 0)" \
            "replay+redis answered from Redis (idempotency_cache_requests_total over the measured runs): hits $M_HIT >= $REDIS_REQUESTS requests, errors $M_ERROR + bypass $M_BYPASS = 0, misses $M_MISS"
        echo "INFO  Redis fast layer since the restart (smoke-key replays, fill, warm-up, measured): hit $CACHE_HIT, miss $CACHE_MISS, error $CACHE_ERROR, bypass $CACHE_BYPASS"
    else
        echo "INFO  REDIS=0: no replay+redis phase"
    fi
    echo "INFO  idempotency records not SUCCEEDED (service keys): $not_succeeded"
    if ((PEER)); then
        DB=$PEER_DB TOTAL_NEW=$PEER_TOTAL_NEW TOTAL_UNANSWERED=$PEER_TOTAL_UNANSWERED \
            PRIMED_NEW=$PEER_PRIMED_NEW PRIMED_ERRORS=$PEER_PRIMED_ERRORS REPLAY_NEW=$PEER_REPLAY_NEW ledger_checks peer
    fi
    total_errors=$(awk -F'\t' '{ s += $6 } END { print s + 0 }' "$ROWS")
    if ((total_errors > 0)); then
        echo "WARN  $total_errors request/transaction errors in the measured runs (see the errors column)"
    fi
    echo '```'
} > "$OUT/checks.txt"
cat "$OUT/checks.txt" >> "$RESULTS"

echo
cat "$RESULTS"
echo
if ((FAILS > 0)); then
    die "$FAILS correctness check(s) failed"
fi
log "all correctness checks passed"
