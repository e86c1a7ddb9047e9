#!/usr/bin/env bash
# HTTP benchmark: lease cycles (cycles.lua: each acquire grants a new lease, each release gives
# back one by leaseId) against Leasehold with its state on disk, the same with --in-memory (what
# the store costs a request), and bare QtHttpServer routes doing the same JSON work; same
# sitting, rounds interleaved, wrk -t2 -c50 keep-alive. After each Leasehold run the service's
# own counts and ledger are checked (ledgercheck.py): a run that did not make the grants and
# releases it reports fails the benchmark. Then the renewal workload (renewals.lua), labelled
# as such, the wake-up latency of a parked wait and, when redis is installed, its SET NX PX.
#   DURATION=10s  per run;  ROUNDS=3
# Usage: tests/bench/http/run.sh [build-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../../build}
command -v wrk >/dev/null || { echo "install wrk: ./packaging/install-deps.sh --bench"; exit 2; }
duration=${DURATION:-10s}
rounds=${ROUNDS:-3}
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

# run SCRIPT PORT CHECK: one wrk run; with CHECK (cycles, renewals) the service's ledger must
# show the work (the benchmark stops otherwise).
run() {
  local script=$1 port=$2 check=${3:-} before out requests
  [ -n "$check" ] && before=$(python3 "$here/ledgercheck.py" mark "$port")
  out=$(wrk -t2 -c50 -d"$duration" -s "$here/$script" "http://127.0.0.1:$port")
  tail -1 <<<"$out"
  if [ -n "$check" ]; then
    requests=$(sed -n 's/.* of \([0-9]*\) requests$/\1/p' <<<"$out")
    printf '             '
    python3 "$here/ledgercheck.py" "$check" "$port" "$before" "$requests" ||
      { echo "$out"; exit 1; }
  fi
}

for round in $(seq "$rounds"); do
  echo "round $round, cycles"
  printf '  leasehold: '; run cycles.lua "$lh" cycles
  printf '  in memory: '; run cycles.lua "$mem" cycles
  printf '  bare:      '; run cycles.lua "$bare"
done
echo "renewals (each agent renews its one lease)"
printf '  leasehold: '; run renewals.lua "$lh" renewals
printf '  in memory: '; run renewals.lua "$mem" renewals
if command -v python3 >/dev/null; then
  python3 "$here/wakeup.py" "$lh" 2000
fi
if command -v redis-benchmark >/dev/null && command -v redis-server >/dev/null; then
  redis-server --port 6390 --save '' --daemonize yes >/dev/null
  redis-benchmark -p 6390 -c 50 -n 200000 -q SET k v NX PX 30000 | tail -1
  redis-cli -p 6390 shutdown nosave >/dev/null 2>&1 || true
fi
