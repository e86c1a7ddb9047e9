#!/usr/bin/env bash
# Engine-thread instructions per acquire+release pair (callgrind), the store detached vs
# attached: the bench_store comparison without the machine's noise; and the writer thread's
# instructions per pair (SQLite and QtSql, on its own thread). Each case runs twice, with N and
# 2N pairs, so set-up and tear-down cancel out of the difference.
# Usage: tests/bench/store_instructions.sh [build-dir] [N]
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
n=${2:-20000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
count() { # case pairs -> instructions of the benchmark's own thread
  # Only what the engine thread does for the pairs: the engine calls and the host's alarm and
  # submissions, not the benchmark's paced waits for the writer (their length varies).
  LEASEHOLD_BENCH_PAIRS=$2 valgrind --tool=callgrind --separate-threads=yes \
    --toggle-collect='leasehold::LeaseEngine::acquire*' \
    --toggle-collect='leasehold::LeaseEngine::release*' \
    --toggle-collect='leasehold::EngineHost::rearm*' \
    --toggle-collect='leasehold::EngineHost::submitPending*' \
    --callgrind-out-file="$out/cg" "$build/tests/bench/bench_store" \
    --benchmark_filter="BM_HostPairs/$1/" > /dev/null 2>&1
  callgrind_annotate "$out/cg-01" 2> /dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  rm -f "$out"/cg*
}
writer() { # pairs -> instructions of the store's writer thread, everything it does
  LEASEHOLD_BENCH_PAIRS=$1 valgrind --tool=callgrind --separate-threads=yes \
    --callgrind-out-file="$out/cg" "$build/tests/bench/bench_store" \
    --benchmark_filter="BM_HostPairs/1/1/" > /dev/null 2>&1
  callgrind_annotate "$out/cg-02" 2> /dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  rm -f "$out"/cg*
}
declare -A per
for c in 0/0 1/1; do
  per[$c]=$((($(count "$c" $((2 * n))) - $(count "$c" "$n")) / n))
done
echo "detached: ${per[0/0]} instructions per pair"
echo "attached: ${per[1/1]} instructions per pair"
echo "store cost: $(((per[1/1] - per[0/0]) * 1000 / per[0/0] / 10)).$(((per[1/1] - per[0/0]) * 1000 / per[0/0] % 10)) %"
echo "writer:   $((($(writer $((2 * n))) - $(writer "$n")) / n)) instructions per pair (its own thread)"
