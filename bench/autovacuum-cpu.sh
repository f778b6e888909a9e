#!/usr/bin/env bash
# Autovacuum's CPU in a PostgreSQL server log written with log_autovacuum_min_duration = 0 (as
# OverloadIT's cluster writes target/overload-it/pg/server.log), summed per kind and table, largest
# first, with the total: what the maintenance of a run's rows took from the CPU it ran on.
#   bench/autovacuum-cpu.sh target/overload-it/pg/server.log
set -euo pipefail
log=${1:?usage: bench/autovacuum-cpu.sh SERVER_LOG}
awk '
    /automatic (aggressive )?(vacuum|analyze) of table/ {
        kind = ($0 ~ /analyze of table/) ? "analyze" : "vacuum"
        match($0, /of table "[^"]+"/)
        table = substr($0, RSTART + 10, RLENGTH - 11)
        sub(/^.*\./, "", table)
    }
    /system usage: CPU: user:/ && kind != "" {
        match($0, /user: [0-9.]+ s, system: [0-9.]+ s/)
        split(substr($0, RSTART, RLENGTH), part, " ")
        cpu[kind " " table] += part[2] + part[5]
        total += part[2] + part[5]
        kind = ""
    }
    END {
        for (key in cpu) if (cpu[key] >= 0.005) printf "%-40s %6.2f s\n", key, cpu[key] | "sort -k3 -rn"
        close("sort -k3 -rn")
        printf "%-40s %6.2f s\n", "total", total
    }' "$log"
