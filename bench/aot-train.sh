#!/usr/bin/env bash
# Retrains target/quarkus-app/app.aot with a full start of the packaged service (not only its
# static initialization, as ./mvnw package -Paot does): Flyway, the pools, Vert.x, the broker
# clients and a few requests are in the cache too, which makes the next starts faster
# (docs/DEVELOPING.md "Fast start"). Needs the -Paot build, JDK 25+ (the JDK that will run it)
# and a PostgreSQL (PG_URL, as bench/startup.sh; the database is created and migrated if missing).
#
#   ./mvnw -B package -Paot -DskipTests && bench/aot-train.sh
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
APP="$(dirname "$BENCH_DIR")/target/quarkus-app"
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
PG_URL=${PG_URL:-postgresql://postgres@127.0.0.1:5432/orders_startup}
PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

die() { echo "ERROR: $*" >&2; exit 1; }
[ -f "$APP/quarkus-run.jar" ] || die "no $APP/quarkus-run.jar: ./mvnw -B package -Paot -DskipTests first"
unzip -p "$APP/quarkus-run.jar" META-INF/MANIFEST.MF | grep -q AotQuarkusEntryPoint \
    || die "$APP is not the aot-jar layout: build with -Paot"

. "$BENCH_DIR/jwt.sh"
new_key_pair
NOW=$(date +%s)
TOKEN=$(make_jwt "{\"iss\":\"aot-train\",\"sub\":\"7\",\"iat\":$NOW,\"exp\":$((NOW + 3600)),\"jti\":\"aot-$NOW\"}")

db=${PG_URL##*/}; db=${db%%\?*}
if command -v psql >/dev/null; then
    admin=${PG_URL%/*}/postgres
    psql -q "$admin" -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 \
        || psql -q "$admin" -c "CREATE DATABASE $db"
fi

rm -f "$APP/app.aot"
(cd "$APP" && exec env QUARKUS_DATASOURCE_REACTIVE_URL="$PG_URL" \
    MP_JWT_VERIFY_PUBLICKEY_LOCATION="$TMP/pub.pem" MP_JWT_VERIFY_ISSUER=aot-train \
    QUARKUS_HTTP_PORT="$PORT" QUARKUS_SHUTDOWN_DELAY=0s \
    "$JAVA_HOME/bin/java" -XX:AOTCacheOutput=app.aot -jar quarkus-run.jar >"$TMP/train.log" 2>&1) &
pid=$!
for _ in $(seq 1 600); do
    curl -s --max-time 1 "http://127.0.0.1:$PORT/q/health/ready" | grep -q '"status": *"UP"' && break
    kill -0 "$pid" 2>/dev/null || { cat "$TMP/train.log" >&2; die "the service exited"; }
    sleep 0.2
done
# The requests a started service answers first: its own reads, a refused token, health, metrics.
for _ in 1 2 3; do
    curl -s -o /dev/null -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/orders?limit=1"
    curl -s -o /dev/null -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/inventory/1"
    curl -s -o /dev/null "http://127.0.0.1:$PORT/api/orders"
    curl -s -o /dev/null "http://127.0.0.1:$PORT/q/health/ready"
    curl -s -o /dev/null "http://127.0.0.1:$PORT/q/metrics"
done
# The JVM writes the cache as it exits.
kill "$pid"
wait "$pid" || true
grep -E "AOTCache creation is complete" "$TMP/train.log" || { tail -20 "$TMP/train.log" >&2; die "no cache written"; }
ls -l "$APP/app.aot"
