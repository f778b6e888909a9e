#!/usr/bin/env bash
# Two replicas of the packaged service on one PostgreSQL, the same Idempotency-Key sent to both at
# once: the database alone must admit one execution per key (docs/SCALING.md, section 1).
# Uses target/quarkus-app/quarkus-run.jar (./mvnw -B package -DskipTests) and the local PostgreSQL
# (127.0.0.1:5432, user postgres, trust) in a scratch database dropped at exit.
#
# Knobs: KEYS (default 20), PER_REPLICA (concurrent requests per key and replica, default 5),
# PORT_A / PORT_B (default 38082 / 38084).
set -euo pipefail
cd "$(dirname "$0")/.."

KEYS=${KEYS:-20}
PER_REPLICA=${PER_REPLICA:-5}
PORT_A=${PORT_A:-38082}
PORT_B=${PORT_B:-38084}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
JAR=target/quarkus-app/quarkus-run.jar
DB="replicas_$(date +%s)_$$"
PSQL=(psql -X -q -At -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1)
TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    "${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$TMP"
}
trap cleanup EXIT
[[ -f $JAR ]] || { echo "no $JAR: run ./mvnw -B package -DskipTests first" >&2; exit 1; }

"${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB"

# shellcheck source=bench/jwt.sh
. bench/jwt.sh
new_key_pair
ISSUER="https://replicas.local/$DB"
NOW=$(date +%s)
TOKEN=$(make_jwt "{\"iss\":\"$ISSUER\",\"sub\":\"7\",\"iat\":$NOW,\"exp\":$((NOW + 3600))}")
ADMIN=$(make_jwt "{\"iss\":\"$ISSUER\",\"sub\":\"1\",\"iat\":$NOW,\"exp\":$((NOW + 3600)),\"groups\":[\"inventory-admin\"]}")

start() { # port
    env QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://127.0.0.1:5432/$DB" QUARKUS_DATASOURCE_USERNAME=postgres \
        QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_HTTP_PORT="$1" \
        MP_JWT_VERIFY_PUBLICKEY_LOCATION="$TMP/pub.pem" MP_JWT_VERIFY_ISSUER="$ISSUER" \
        "$JAVA_HOME/bin/java" -jar "$JAR" >"$TMP/replica-$1.log" 2>&1 &
    PIDS+=($!)
}
# One after the other, so the second finds the schema Flyway made for the first.
for port in "$PORT_A" "$PORT_B"; do
    start "$port"
    for _ in $(seq 1 120); do
        curl -sf "http://127.0.0.1:$port/q/health/ready" >/dev/null && break
        sleep 1
    done
    curl -sf "http://127.0.0.1:$port/q/health/ready" >/dev/null || { tail -n 30 "$TMP/replica-$port.log"; exit 1; }
done
echo "two replicas up on $PORT_A and $PORT_B"

curl -sf -X PUT "http://127.0.0.1:$PORT_A/api/inventory/1" -H "Authorization: Bearer $ADMIN" \
    -H 'Content-Type: application/json' -d '{"available": 1000}' >/dev/null

for k in $(seq 1 "$KEYS"); do
    key="replicas-$DB-$k"
    sent=()
    for i in $(seq 1 "$PER_REPLICA"); do
        for port in "$PORT_A" "$PORT_B"; do
            curl -s -o "$TMP/body-$k-$port-$i" -D "$TMP/head-$k-$port-$i" -X POST "http://127.0.0.1:$port/api/orders" \
                -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: $key" -H 'Content-Type: application/json' \
                -d '{"skuId": 1, "quantity": 1}' &
            sent+=($!)
        done
    done
    wait "${sent[@]}" # not a bare wait: that would wait for the replicas too
done

fresh=$(cat "$TMP"/head-* | grep -ci '^idempotent-replayed: false' || true)
replayed=$(cat "$TMP"/head-* | grep -ci '^idempotent-replayed: true' || true)
statuses=$(cat "$TMP"/head-* | awk 'toupper($1) ~ /^HTTP/ {print $2}' | sort | uniq -c | tr -s ' ' | tr '\n' ',')
distinct_bodies=0
for k in $(seq 1 "$KEYS"); do
    distinct_bodies=$((distinct_bodies + $(cat "$TMP"/body-"$k"-* | sort -u | wc -l)))
done
orders=$("${PSQL[@]}" -d "$DB" -c "SELECT count(*) FROM purchase_order")
stock=$("${PSQL[@]}" -d "$DB" -c "SELECT available FROM sku_inventory WHERE sku_id = 1")
echo "keys $KEYS, requests $((KEYS * PER_REPLICA * 2)) (half to each replica, $((PER_REPLICA * 2)) at once per key)"
echo "statuses: ${statuses%,}"
echo "Idempotent-Replayed false: $fresh, true: $replayed; distinct bodies per key summed over keys: $distinct_bodies"
echo "orders in the database: $orders; stock left: $stock of 1000"
[[ $orders == "$KEYS" && $fresh == "$KEYS" && $stock == $((1000 - KEYS)) && $distinct_bodies == "$KEYS" ]] \
    && echo "PASS: one execution per key across two replicas" || { echo "FAIL"; exit 1; }
