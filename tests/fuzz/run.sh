#!/usr/bin/env bash
# Fuzzes every target of a LEASEHOLD_FUZZ=ON build for a bounded time each, on a scratch copy of
# its checked-in corpus (the repository is never written), and fails on the first crash, leak,
# hang or sanitizer report. A finding is left in the artifacts directory (see README.md).
#
#   tests/fuzz/run.sh BUILD_DIR [SECONDS_PER_TARGET=60] [ARTIFACTS_DIR=BUILD_DIR/fuzz-findings]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$1"
seconds="${2:-60}"
artifacts="${3:-$build/fuzz-findings}"
mkdir -p "$artifacts"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

dictionary() {
    case "$1" in
    fuzz_http_stream) echo "-dict=$here/http.dict" ;;
    fuzz_rest_requests | fuzz_mcp_messages | fuzz_config_files | fuzz_hook_*) echo "-dict=$here/json.dict" ;;
    esac
}

# The dialects' and the shell parser's targets parse small inputs without a service, at
# thousands of inputs a second: a fifth of the budget each covers them.
budget() {
    case "$1" in
    fuzz_hook_events) echo "$seconds" ;;
    fuzz_hook_* | fuzz_shell_writes) echo $(((seconds + 4) / 5)) ;;
    *) echo "$seconds" ;;
    esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export QT_QPA_PLATFORM=offscreen
status=0
for seeds in "$here"/corpus/fuzz_*; do
    name="$(basename "$seeds")"
    binary="$build/tests/fuzz/$name"
    [ -x "$binary" ] || { echo "fuzz: $binary is missing (build with -DLEASEHOLD_FUZZ=ON)"; exit 1; }
    mkdir -p "$scratch/$name"
    log="$scratch/$name.log"
    # shellcheck disable=SC2046
    if "$binary" -max_total_time="$(budget "$name")" -timeout=20 -rss_limit_mb=3072 -max_len=8192 \
        -print_final_stats=1 -artifact_prefix="$artifacts/$name-" $(dictionary "$name") \
        "$scratch/$name" "$seeds" >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
        cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
        echo "fuzz: $name: ${runs:-?} inputs, ${rate:-?}/s, ${cov:-cov: ?}, no findings"
    else
        echo "fuzz: $name FAILED; its log:"
        tail -60 "$log"
        status=1
    fi
done
exit $status
