# Sourced by bench/profile.sh and bench/request-floor/floor.sh: one wrk window of a bench/lua
# scenario against 127.0.0.1:$PORT, with the caller's BENCH_DIR, TMP, RUN (the key prefix's run
# part) and TOKEN; and the wait for a JVM's JIT to settle, as bench/run.sh waits.

# shellcheck source=bench/jit.sh
. "$BENCH_DIR/jit.sh"
#
# load SCRIPT CONNECTIONS SECONDS SCENARIO [ARG]: wrk with bench/lua/SCRIPT.lua; prints its BENCH
# line. Keys are <RUN>-<SCENARIO>-...; ARG is one more key=value for the script. Each script
# thread prints "DRAINED" once its window is over (or its keys are sent) and every request has its
# answer; SIGINT then ends wrk, as in bench/run.sh.
load() {
    local out="$TMP/wrk.txt" wrk_pid
    # Emptied here, not by wrk's redirection: that runs in the background job, and the loop below
    # could read the last window's DRAINED lines first and end this window at once.
    : >"$out"
    wrk -t 2 -c "$2" -d "$(($3 + 30))s" --timeout 10s -s "$BENCH_DIR/lua/$1.lua" "http://127.0.0.1:$PORT/api/orders" -- \
        "prefix=$RUN-$4" "token=$TOKEN" "window=$3" skus=1000 count=1000 nthreads=2 ${5:+"$5"} >"$out" 2>&1 &
    wrk_pid=$!
    while kill -0 "$wrk_pid" 2>/dev/null; do
        if [ "$(grep -c '^DRAINED ' "$out" || true)" -ge 2 ]; then kill -INT "$wrk_pid" 2>/dev/null || true; break; fi
        sleep 0.2
    done
    wait "$wrk_pid" || true
    grep '^BENCH' "$out" || { cat "$out"; echo "ERROR: wrk printed no BENCH line" >&2; exit 1; }
}

# settle_jit PID CONNECTIONS SCENARIO: creates at CONNECTIONS in 10 s steps until the JIT compilers
# of the JVM PID used under 3 % of a core in a step, at most JIT_SETTLE_SECONDS (120); says on
# stderr how long it took. Keys are <RUN>-<SCENARIO>-<step>-...
settle_jit() {
    if jit_settle "$1" 10 "${JIT_SETTLE_SECONDS:-120}" settle_window "$2" "$3"; then
        echo "JIT settled after $JIT_WAITED s more of creates at $2 connections" >&2
    else
        echo "JIT still compiling after $JIT_WAITED s more of creates at $2 connections; measuring anyway" >&2
    fi
}
settle_window() { # CONNECTIONS SCENARIO WAITED
    load create "$1" 10 "$2-$3" >/dev/null
}
