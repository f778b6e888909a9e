# Sourced by bench/run.sh and bench/load.sh: how busy a JVM's JIT compilers are (issue 17, bench/README.md
# "Issue 17: the JIT settles before the first row, the peer row by row").
#
# jit_ticks PID: utime+stime of the JVM's compiler threads, in clock ticks. HotSpot names them
# "C1 CompilerThreadN" and "C2 CompilerThreadN"; comm keeps 15 characters. A compiler thread that
# HotSpot retired meanwhile takes its ticks with it, so compare two reads close together.
jit_ticks() {
    local task
    for task in /proc/"$1"/task/*; do
        [[ $(cat "$task/comm" 2>/dev/null) == C[12]\ CompilerThre* ]] || continue
        awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "$task/stat" 2>/dev/null
    done | awk '{ n += $1 } END { print n + 0 }'
}

# jit_settle PID STEP LIMIT COMMAND...: runs COMMAND (one load window of STEP seconds; it gets the
# seconds waited so far as its last argument) until the JIT compilers of the JVM PID used under 3 %
# of a core in a window, for at most LIMIT seconds. Sets JIT_WAITED (seconds) and JIT_LAST_MS (the
# compilers' CPU in the last window); returns 0 once they were quiet, 1 when LIMIT passed first.
jit_settle() {
    local pid=$1 step=$2 limit=$3 hz j0 j1
    shift 3
    hz=$(getconf CLK_TCK)
    JIT_WAITED=0
    while ((JIT_WAITED < limit)); do
        j0=$(jit_ticks "$pid")
        "$@" "$JIT_WAITED"
        j1=$(jit_ticks "$pid")
        JIT_WAITED=$((JIT_WAITED + step))
        JIT_LAST_MS=$(((j1 - j0) * 1000 / hz))
        ((j1 - j0 >= hz * step * 3 / 100)) || return 0
    done
    return 1
}
