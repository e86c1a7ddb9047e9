#!/usr/bin/env bash
# Instructions per request (callgrind, all threads: the store's writer counts), Leasehold on
# disk, Leasehold --in-memory and the bare route, for the same N requests of lease cycles
# (fixedload.py: a grant, then its release by leaseId): a
# figure that does not move with the machine's load. Then each thread's share: the engine
# thread (which serves HTTP), the store's writer and its reader.
#   N=4000          requests measured; 40000 and more let the ledger seal partitions, so the
#                   writer's upkeep (their indexes, retention) is counted too
#   CONNECTIONS=1   keep-alive connections the requests are spread over, one request in flight
#                   on each; one connection makes every change its own commit, 50 lets the
#                   store group them (as wrk -c50 does; how much depends on valgrind's pace)
# Usage: tests/bench/http/instructions.sh [build-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../../build}
n=${N:-4000}
connections=${CONNECTIONS:-1}
command -v valgrind >/dev/null || { echo "install valgrind: ./packaging/install-deps.sh --bench"; exit 2; }
for which in leasehold in-memory bare; do
  data=$(mktemp -d)
  if [ "$which" = leasehold ]; then
    cmd=("$build/app/leasehold" --headless --open --port 0 --data-dir "$data")
  elif [ "$which" = in-memory ]; then
    cmd=("$build/app/leasehold" --headless --open --port 0 --data-dir "$data" --in-memory)
  else
    cmd=("$build/tests/bench/bare_server")
  fi
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$data/cg.out" "${cmd[@]}" > "$data/out" 2>/dev/null &
  vg=$!
  for _ in $(seq 120); do grep -q listening "$data/out" 2>/dev/null && break; sleep 0.5; done
  port=$(grep -o 'listening http://[^ ]*' "$data/out" | grep -o '[0-9]*$')
  python3 "$here/fixedload.py" "$port" 200        # warm up
  callgrind_control -z "$vg" > /dev/null
  python3 "$here/fixedload.py" "$port" "$n" "$connections"
  callgrind_control -d "$vg" > /dev/null
  kill "$vg"; wait "$vg" 2>/dev/null || true
  total=0 threads=""
  for part in "$data"/cg.out.1-*; do
    count=$(callgrind_annotate "$part" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    total=$((total + count))
    [ $((count / n)) -gt 0 ] && threads="$threads $((count / n))"
  done
  echo "$which: $((total / n)) instructions per request (by thread:$threads)"
  rm -rf "$data"
done
