#!/usr/bin/env bash
# How long each thread of the service (and of wrk, and of the peer) ran and how long it waited for a
# core while a benchmark runs (issue 17): two reads of /proc/<pid>/task/<tid>/schedstat, WINDOW
# seconds apart. Per thread, as a share of the window:
#   run             on a core
#   runqueue wait   ready to run, waiting for a core (the scheduler's run_delay)
# and how often it was put on a core per second. A thread that waits about as long as it runs is
# held back by the machine's other work, not by its own. Threads under 1 % in both are left out.
# Start it in a second shell during a measured window of bench/run.sh or
# bench/request-floor/floor.sh:
#
#   bench/thread-waits.sh
#
# Knobs: WINDOW (10 s), PATTERN (the processes, a pgrep -f pattern: the service's and the peer's
# jars, and wrk).
set -euo pipefail
export LC_ALL=C   # join needs the order sort gave

WINDOW=${WINDOW:-10}
PATTERN=${PATTERN:-quarkus-run.jar|spring-seed-peer.jar|^wrk }

# snap: "pid:tid comm run_ns wait_ns timeslices" for every thread of the matching processes.
snap() {
    local pid task comm stat
    for pid in $(pgrep -f "$PATTERN"); do
        for task in /proc/"$pid"/task/*; do
            # A thread may end between the listing and the reads: read both first and print the line
            # only when both worked, so no line goes out without its figures.
            comm=$(tr -c '[:alnum:]_.#\n-' _ <"$task/comm" 2>/dev/null) || continue
            stat=$(cat "$task/schedstat" 2>/dev/null) || continue
            [ -n "$comm" ] && [ -n "$stat" ] || continue
            printf '%s:%s %s %s\n' "$pid" "${task##*/}" "$comm" "$stat"
        done
    done | sort
}

before=$(snap)
[ -n "$before" ] || { echo "no process matches $PATTERN" >&2; exit 1; }
sleep "$WINDOW"
after=$(snap)

echo "| thread | process | run % | runqueue wait % | on a core per s |"
echo "|---|---:|---:|---:|---:|"
join <(echo "$before") <(echo "$after") | awk -v s="$WINDOW" '
    { run = ($7 - $3) / 1e7 / s; wait = ($8 - $4) / 1e7 / s; n = ($9 - $5) / s
      split($1, id, ":")
      if (run >= 1 || wait >= 1) printf "| %s | %s | %.1f | %.1f | %.0f |\n", $2, id[1], run, wait, n }' \
    | sort -t '|' -k4 -rn
