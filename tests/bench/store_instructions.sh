#!/usr/bin/env bash
# Engine-thread instructions per acquire+release pair (callgrind), the store detached vs
# attached: the bench_store comparison without the machine's noise; and the writer thread's
# instructions per pair (SQLite and QtSql, on its own thread). Each case runs twice, with N and
# 2N pairs, so set-up and tear-down cancel out of the difference.
# Usage: tests/bench/store_instructions.sh [build-dir] [N]
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
n=${2:-20000}
command -v valgrind >/dev/null || { echo "install valgrind: ./packaging/install-deps.sh --bench"; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Only what the engine thread does for the pairs: the engine calls and the host's alarm and
# submissions, not the benchmark's paced waits for the writer (their length varies).
engine=(--toggle-collect='leasehold::LeaseEngine::acquire*'
        --toggle-collect='leasehold::LeaseEngine::release*'
        --toggle-collect='leasehold::EngineHost::rearm*'
        --toggle-collect='leasehold::EngineHost::submitPending*')
count() { # case pairs thread [callgrind options] -> that thread's instructions (01 engine, 02 writer)
  LEASEHOLD_BENCH_PAIRS=$2 valgrind --tool=callgrind --separate-threads=yes "${@:4}" \
    --callgrind-out-file="$out/cg" "$build/tests/bench/bench_store" \
    --benchmark_filter="BM_HostPairs/$1/" > /dev/null 2>&1
  callgrind_annotate "$out/cg-$3" 2> /dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  rm -f "$out"/cg*
}
per_pair() { # case thread [callgrind options] -> instructions per pair, N and 2N differenced
  echo $((($(count "$1" $((2 * n)) "${@:2}") - $(count "$1" "$n" "${@:2}")) / n))
}
declare -A per
for c in 0/0 1/1; do
  per[$c]=$(per_pair "$c" 01 "${engine[@]}")
done
echo "detached: ${per[0/0]} instructions per pair"
echo "attached: ${per[1/1]} instructions per pair"
echo "store cost: $(((per[1/1] - per[0/0]) * 1000 / per[0/0] / 10)).$(((per[1/1] - per[0/0]) * 1000 / per[0/0] % 10)) %"
echo "writer:   $(per_pair 1/1 02) instructions per pair (its own thread, everything it does)"
