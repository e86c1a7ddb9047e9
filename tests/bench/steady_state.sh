#!/usr/bin/env bash
# Steady state: Leasehold with its state on disk under wrk acquire/release load (-t2 -c50) for
# MINUTES minutes, then the same with --in-memory, in one sitting. Per minute: requests/s, p50,
# p99, RSS and the database's size (file + WAL). Then a filtered ledger query's time.
#   MINUTES=10      minutes per mode
#   PREFILL=N       first fill the on-disk ledger with N events (tests/bench/prefill_ledger.py)
#                   and keep them (retention raised above N)
#   BINARY=path     another leasehold to compare (default: the build's)
#   MODES="disk memory"  which runs, in this order
#   KEEP=1          keep the scratch folder (each mode's database and log) and print its path
# Usage: tests/bench/steady_state.sh [build-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
binary=${BINARY:-$build/app/leasehold}
minutes=${MINUTES:-10}
prefill=${PREFILL:-0}
command -v wrk >/dev/null || { echo "install wrk (apt-get install wrk)"; exit 2; }
work=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then
  echo "scratch folder: $work"
  trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
else
  trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
fi

port_of() { for _ in $(seq 600); do grep -qo 'listening http://[^ ]*' "$1" && break; sleep 0.1; done
            grep -o 'listening http://[^ ]*' "$1" | grep -o '[0-9]*$'; }

run_mode() { # mode -> per-minute rows, then "total" and "first" / "last" requests/s
  local mode=$1 data="$work/$1" args=()
  mkdir -p "$data"
  [ "$mode" = memory ] && args+=(--in-memory)
  if [ "$mode" = disk ] && [ "$prefill" -gt 0 ]; then
    echo "{\"ledgerRetainRows\": $((prefill * 2)), \"ledgerRetainDays\": 36500}" > "$work/config.json"
    args+=(--config "$work/config.json")
    "$binary" --headless --open --port 0 --data-dir "$data" "${args[@]}" > "$data/out" 2>&1 &
    port_of "$data/out" > /dev/null; kill $!; wait $! 2>/dev/null || true
    python3 "$here/prefill_ledger.py" "$data/leasehold.db" "$prefill"
  fi
  "$binary" --headless --open --port 0 --data-dir "$data" "${args[@]}" > "$data/out" 2>&1 &
  local pid=$! port
  port=$(port_of "$data/out")
  printf '%-7s %6s %10s %8s %8s %8s %10s\n' "$mode" minute "requests/s" "p50 ms" "p99 ms" \
    "RSS MiB" "db MiB"
  for m in $(seq "$minutes"); do
    line=$(wrk -t2 -c50 -d60s -s "$here/http/acquire_release.lua" "http://127.0.0.1:$port" | tail -1)
    rps=$(awk '{print $2}' <<<"$line"); p50=$(awk '{print $4}' <<<"$line"); p99=$(awk '{print $7}' <<<"$line")
    rss=$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
    db=$( (du -cm "$data"/leasehold.db* 2>/dev/null || true) | tail -1 | awk '{print $1}')
    printf '%-7s %6s %10s %8s %8s %8s %10s\n' "$mode" "$m" "$rps" "$p50" "$p99" "$rss" "${db:-0}"
    echo "$mode $m $rps" >> "$work/rates"
  done
  if [ "$mode" = disk ]; then
    local agent=did:agent:bench-1-7 url="http://127.0.0.1:$port/api/v1/acp/coordination/ledger"
    for _ in 1 2 3; do
      curl -s -o /dev/null -w "ledger?actorDid=$agent&limit=100: %{time_total} s\n" \
        "$url?actorDid=$agent&limit=100"
    done
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

for mode in ${MODES:-disk memory}; do run_mode "$mode"; done
[ -z "${MODES:-}" ] || exit 0
awk '{ sum[$1] += $3; n[$1]++; if ($2 == 1) first[$1] = $3; last[$1] = $3 }
     END { printf "on disk / in memory over the run: %.2f\n", sum["disk"] / sum["memory"];
           printf "on disk, last minute / first minute: %.2f\n", last["disk"] / first["disk"] }' \
  "$work/rates"
