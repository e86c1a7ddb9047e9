#!/usr/bin/env bash
# HTTP benchmark: Leasehold's acquire/release with its state on disk, the same with
# --in-memory (what the store costs a request), and a bare QtHttpServer route doing the same
# JSON work; same sitting, wrk -t2 -c50 keep-alive. Usage: tests/bench/http/run.sh [build-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../../build}
command -v wrk >/dev/null || { echo "install wrk: ./packaging/install-deps.sh --bench"; exit 2; }
duration=${DURATION:-10s}
data=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$data"' EXIT

port_of() { for _ in $(seq 50); do grep -qo 'listening http://[^ ]*' "$1" && break; sleep 0.1; done
            grep -o 'listening http://[^ ]*' "$1" | grep -o '[0-9]*$'; }

"$build/app/leasehold" --headless --open --port 0 --data-dir "$data" > "$data/lh.out" 2>&1 &
mkdir "$data/mem"
"$build/app/leasehold" --headless --open --port 0 --data-dir "$data/mem" --in-memory \
  > "$data/mem.out" 2>&1 &
"$build/tests/bench/bare_server" > "$data/bare.out" 2>&1 &
lh=$(port_of "$data/lh.out"); mem=$(port_of "$data/mem.out"); bare=$(port_of "$data/bare.out")

for round in 1 2 3; do
  echo "round $round"
  printf '  leasehold: '; wrk -t2 -c50 -d"$duration" -s "$here/acquire_release.lua" "http://127.0.0.1:$lh" | tail -1
  printf '  in memory: '; wrk -t2 -c50 -d"$duration" -s "$here/acquire_release.lua" "http://127.0.0.1:$mem" | tail -1
  printf '  bare:      '; wrk -t2 -c50 -d"$duration" -s "$here/acquire_release.lua" "http://127.0.0.1:$bare" | tail -1
done
if command -v python3 >/dev/null; then
  python3 "$here/wakeup.py" "$lh" 2000
fi
if command -v redis-benchmark >/dev/null && command -v redis-server >/dev/null; then
  redis-server --port 6390 --save '' --daemonize yes >/dev/null
  redis-benchmark -p 6390 -c 50 -n 200000 -q SET k v NX PX 30000 | tail -1
  redis-cli -p 6390 shutdown nosave >/dev/null 2>&1 || true
fi
