#!/usr/bin/env bash
# Where PostgreSQL's work per create goes, statement by statement (issue 17). The packaged service
# and, with PEER=1, the peer run on databases of their own in a private PostgreSQL cluster that
# loads pg_stat_statements (the machine's server does not, and is left alone), under the creates
# of bench/lua/create.lua. After the warm-up and the JIT's settling come ROUNDS windows per target,
# alternating. Each window starts with the statistics reset and is read once the relay has
# published its events, so the relay's statements count too. Per create, for all statements and
# for the top ones: calls, execution time, WAL bytes, full-page images and buffers read; and the
# window's WAL by record type and relation (pg_waldump), so each table's and index's share shows.
#
#   ./mvnw -B package -DskipTests && bench/pg-statements.sh
#
# Execution time is wall time inside a statement: on a busy machine it includes waiting for a
# core. Buffers and WAL bytes do not depend on the machine's speed; compare those across sittings.
#
# Knobs (environment): JAVA_HOME; PEER (0; 1 also measures the peer, PEER_JAR: default the jar
# bench/run.sh builds, bench/out/peer-build/target/spring-seed-peer.jar); PG_BIN (the server's
# binaries: pg_config --bindir, else the newest /usr/lib/postgresql/*/bin); SETTINGS_FROM
# (postgresql://postgres@127.0.0.1:5432/postgres: the cluster copies its shared_buffers, fsync,
# synchronous_commit, full_page_writes, autovacuum, max_wal_size and checkpoint_timeout, so it runs
# as the server bench/run.sh measures; empty: PostgreSQL's defaults); WARMUP_SECONDS (60);
# JIT_SETTLE_SECONDS (120); DURATION (20); CONNECTIONS (16); ROUNDS (2). Writes
# bench/out/pg-statements-<time>/ (logs, results.txt). Run it alone on the machine.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
APP="$(dirname "$BENCH_DIR")/target/quarkus-app"
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
PEER=${PEER:-0}
PEER_JAR=${PEER_JAR:-$BENCH_DIR/out/peer-build/target/spring-seed-peer.jar}
SETTINGS_FROM=${SETTINGS_FROM-postgresql://postgres@127.0.0.1:5432/postgres}
WARMUP_SECONDS=${WARMUP_SECONDS:-60}
DURATION=${DURATION:-20}
CONNECTIONS=${CONNECTIONS:-16}
ROUNDS=${ROUNDS:-2}
OUT="$BENCH_DIR/out/pg-statements-$(date +%Y%m%d-%H%M%S)"
TMP=$(mktemp -d)
SERVICE_PID=""
PEER_PID=""

die() { echo "ERROR: $*" >&2; exit 1; }
log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
[ -f "$APP/quarkus-run.jar" ] || die "no $APP/quarkus-run.jar: ./mvnw -B package -DskipTests first"
for tool in wrk psql curl python3 openssl; do command -v "$tool" >/dev/null || die "$tool is needed"; done
((PEER == 0)) || [ -f "$PEER_JAR" ] || die "PEER=1: no peer jar at $PEER_JAR (PEER=1 bench/run.sh builds it)"
if [[ -z ${PG_BIN:-} ]]; then
    PG_BIN=$(pg_config --bindir 2>/dev/null || true)
    [[ -x $PG_BIN/initdb ]] || PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
fi
[[ -x $PG_BIN/initdb && -x $PG_BIN/pg_ctl ]] || die "no initdb and pg_ctl in PG_BIN=$PG_BIN"
mkdir -p "$OUT"

# ------------------------------------------------------------------------------------------
# The private cluster. PostgreSQL refuses to run as root: as root, it runs as the user postgres.
# ------------------------------------------------------------------------------------------
PGDATA="$TMP/pgdata"
PG_PORT=$(free_port)
as_pg_user() {
    if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi
}
stop_all() {
    [ -z "$SERVICE_PID" ] || { kill "$SERVICE_PID" 2>/dev/null; wait "$SERVICE_PID" 2>/dev/null || true; }
    [ -z "$PEER_PID" ] || { kill "$PEER_PID" 2>/dev/null; wait "$PEER_PID" 2>/dev/null || true; }
    [ ! -f "$PGDATA/postmaster.pid" ] || as_pg_user "$PG_BIN/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null 2>&1 || true
    cp "$TMP/postgresql.log" "$OUT/" 2>/dev/null || true
    rm -rf "$TMP"
}
trap stop_all EXIT
((EUID != 0)) || chown postgres "$TMP"
as_pg_user "$PG_BIN/initdb" -D "$PGDATA" -U postgres --auth=trust >"$OUT/initdb.log" 2>&1 \
    || { cat "$OUT/initdb.log"; die "initdb failed"; }
{
    echo "listen_addresses = '127.0.0.1'"
    echo "port = $PG_PORT"
    echo "unix_socket_directories = '$TMP'"
    echo "max_connections = 200"
    echo "shared_preload_libraries = 'pg_stat_statements'"
    echo "pg_stat_statements.max = 2000"
    # Each window's WAL is read back by pg_waldump, so no checkpoint may recycle it before.
    echo "wal_keep_size = '4GB'"
    if [[ -n $SETTINGS_FROM ]]; then
        # A setting counted in pages (shared_buffers) is written as a number of pages.
        psql -Atq "$SETTINGS_FROM" -c "SELECT name || ' = ''' || setting
                  || CASE WHEN unit IS NULL OR unit = '8kB' THEN '' ELSE unit END || ''''
              FROM pg_settings WHERE name IN ('shared_buffers', 'fsync', 'synchronous_commit', 'full_page_writes',
                                              'autovacuum', 'max_wal_size', 'checkpoint_timeout')"
    fi
} >>"$PGDATA/postgresql.conf"
as_pg_user "$PG_BIN/pg_ctl" -D "$PGDATA" -l "$TMP/postgresql.log" -w start >/dev/null
ADMIN="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
psql -q "$ADMIN" -c "CREATE EXTENSION pg_stat_statements" -c "CREATE DATABASE ours" -c "CREATE DATABASE peer"
psql -Atq "$ADMIN" -c "SELECT 'cluster: PostgreSQL ' || current_setting('server_version') || ', '
        || string_agg(name || '=' || current_setting(name), ' ' ORDER BY name) FROM pg_settings
        WHERE name IN ('shared_buffers', 'fsync', 'synchronous_commit', 'full_page_writes', 'autovacuum',
                       'max_wal_size', 'checkpoint_timeout')" | tee "$OUT/results.txt"

# ------------------------------------------------------------------------------------------
# The service and the peer
# ------------------------------------------------------------------------------------------
# shellcheck source=bench/service.sh
. "$BENCH_DIR/service.sh"
# shellcheck source=bench/jwt.sh
. "$BENCH_DIR/jwt.sh"
# shellcheck source=bench/load.sh
. "$BENCH_DIR/load.sh"
new_key_pair
NOW=$(date +%s)
ISSUER=https://bench.local/pg-statements
TOKEN=$(make_jwt "{\"iss\":\"$ISSUER\",\"sub\":\"7\",\"iat\":$NOW,\"exp\":$((NOW + 7200)),\"jti\":\"pgs-$NOW\"}")
RUN="pgst$(date +%H%M%S)"   # keys are <run>-<scenario>-...: 16 characters at least
seed() { psql -q "postgresql://postgres@127.0.0.1:$PG_PORT/$1" \
    -c "INSERT INTO sku_inventory (sku_id, available) SELECT g, 2000000000 FROM generate_series(1, 1000) g"; }

SERVICE_PORT=$(free_port)
(cd "$APP" && exec env QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://127.0.0.1:$PG_PORT/ours" \
    QUARKUS_DATASOURCE_USERNAME=postgres \
    MP_JWT_VERIFY_PUBLICKEY_LOCATION="$TMP/pub.pem" MP_JWT_VERIFY_ISSUER="$ISSUER" \
    QUARKUS_HTTP_PORT="$SERVICE_PORT" QUARKUS_HTTP_HOST=127.0.0.1 \
    "$JAVA_HOME/bin/java" -jar quarkus-run.jar >"$OUT/service.log" 2>&1) &
SERVICE_PID=$!
await_ready "$SERVICE_PID" "$SERVICE_PORT" "$OUT/service.log"
seed ours
TARGETS="ours"
if ((PEER)); then
    PEER_PORT=$(free_port)
    env SERVER_PORT="$PEER_PORT" SERVER_ADDRESS=127.0.0.1 \
        SPRING_DATASOURCE_URL="jdbc:postgresql://127.0.0.1:$PG_PORT/peer" \
        SPRING_DATASOURCE_USERNAME=postgres SPRING_DATASOURCE_PASSWORD= \
        MP_JWT_VERIFY_PUBLICKEY_LOCATION="$TMP/pub.pem" MP_JWT_VERIFY_ISSUER="$ISSUER" \
        "$JAVA_HOME/bin/java" -jar "$PEER_JAR" >"$OUT/peer.log" 2>&1 &
    PEER_PID=$!
    await_ready "$PEER_PID" "$PEER_PORT" "$OUT/peer.log"
    seed peer
    TARGETS="ours peer"
fi
use() { if [[ $1 == ours ]]; then PORT=$SERVICE_PORT; TARGET_PID=$SERVICE_PID; else PORT=$PEER_PORT; TARGET_PID=$PEER_PID; fi; }

# The window's events, published: the relay's statements for them belong to the window.
outbox_drained() {
    local waiting
    for _ in $(seq 1 600); do
        waiting=$(psql -Atq "postgresql://postgres@127.0.0.1:$PG_PORT/ours" \
            -c "SELECT count(*) FROM outbox_event WHERE published_at IS NULL")
        [[ $waiting == 0 ]] && return 0
        sleep 0.2
    done
    die "the outbox still holds $waiting unpublished events 120 s after the window"
}

# What the window's WAL holds, per create, by record type and the relation it writes (the first
# block a record refers to): the event's heap and each index apart. Checkpoints and the harness
# are in it too.
wal_by_relation() {
    local start=$1 end=$2 creates=$3 db=$4
    echo "WAL of the window by record type and relation, per create (pg_waldump; FPI bytes included)"
    printf '%-26s %-36s %9s %9s\n' record relation records bytes
    {
        psql -Atq -F ' ' "postgresql://postgres@127.0.0.1:$PG_PORT/$db" \
            -c "SELECT 'name', pg_relation_filenode(oid), relname FROM pg_class WHERE pg_relation_filenode(oid) IS NOT NULL"
        as_pg_user "$PG_BIN/pg_waldump" -p "$PGDATA/pg_wal" -s "$start" -e "$end" 2>/dev/null
    } | awk -v creates="$creates" '
        $1 == "name" { name[$2] = $3; next }
        $1 == "rmgr:" {
            match($0, /tot\): *[0-9]+\/ *[0-9]+/); split(substr($0, RSTART, RLENGTH), size, "/")
            match($0, /desc: [A-Z_+]+/); record = $2 "/" substr($0, RSTART + 6, RLENGTH - 6)
            relation = "-"
            if (match($0, /rel [0-9]+\/[0-9]+\/[0-9]+/)) {
                split(substr($0, RSTART + 4, RLENGTH - 4), path, "/")
                relation = (path[3] in name) ? name[path[3]] : path[3]
            }
            bytes[record " " relation] += size[2]; count[record " " relation]++
        }
        END { for (k in bytes) { split(k, key, " ")
                  printf "%-26s %-36s %9.3f %9.1f\n", key[1], key[2], count[k] / creates, bytes[k] / creates } }' \
        | sort -k4 -n -r | head -n 20
}

for target in $TARGETS; do
    use "$target"
    log "warm-up of $target: ${WARMUP_SECONDS}s of creates at 64 connections"
    load create 64 "$WARMUP_SECONDS" "warm-$target" >/dev/null
    settle_jit "$TARGET_PID" "$CONNECTIONS" "jit-$target"
done
outbox_drained

for round in $(seq 1 "$ROUNDS"); do
    # One order per round, the other in the next, as bench/run.sh alternates its rows.
    order=$TARGETS
    ((round % 2 == 1)) || order=$(tr ' ' '\n' <<<"$TARGETS" | tac | tr '\n' ' ')
    for target in $order; do
        use "$target"
        psql -Atq "$ADMIN" -c "SELECT pg_stat_statements_reset()" -c "SELECT pg_stat_reset_shared('wal')" >/dev/null
        start_lsn=$(psql -Atq "$ADMIN" -c "SELECT pg_current_wal_lsn()")
        line=$(load create "$CONNECTIONS" "$DURATION" "r$round-$target")
        [[ $target != ours ]] || outbox_drained
        creates=$(sed -E 's/.* new201=([0-9]+).*/\1/' <<<"$line")
        ((creates > 0)) || die "no creates in the window: $line"
        {
            echo
            echo "== round $round, $target, $CONNECTIONS connections, ${DURATION}s: $line"
            psql -q "$ADMIN" -v creates="$creates" -v db="$target" -f "$BENCH_DIR/pg-statements.sql"
            wal_by_relation "$start_lsn" "$(psql -Atq "$ADMIN" -c "SELECT pg_current_wal_lsn()")" "$creates" "$target"
        } | tee -a "$OUT/results.txt"
    done
done
log "results: $OUT/results.txt"
