# Sourced by bench/profile.sh and bench/relay-drain.sh: the packaged service they started.
#
# await_ready PID PORT LOG: returns once the service answers UP on /q/health/ready; dies (the
# caller's die) if it exits first, pointing at LOG.
await_ready() {
    for _ in $(seq 1 120); do
        curl -fs -o /dev/null "http://127.0.0.1:$2/q/health/ready" && return 0
        kill -0 "$1" 2>/dev/null || die "the service exited (see $3)"
        sleep 0.5
    done
    die "the service was not ready within 60 s (see $3)"
}
