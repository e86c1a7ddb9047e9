#!/usr/bin/env bash
# Steady state: Leasehold with its state on disk under wrk acquire/release load (-t2 -c50) for
# MINUTES loaded minutes, beside the same with --in-memory, in one sitting. Both services run
# from the start and the loaded minutes alternate (disk, memory, disk, ...), so both see the same
# machine: on a shared machine whose speed drifts by half within an hour, two halves run one
# after the other compare the drift, not the modes. Per loaded minute: requests/s, p50, p99, the
# service's CPU time per request, RSS and the database's size (file + WAL). Then a filtered
# ledger query's time.
#   MINUTES=10      loaded minutes per mode (the run takes twice as long)
#   PREFILL=N       first fill the on-disk ledger with N events (tests/bench/prefill_ledger.py)
#                   and keep them (retention raised above N)
#   BINARY=path     another leasehold to compare (default: the build's)
#   MODES="disk memory"  which services (one mode alone: just that one)
#   SEQUENTIAL=1    all minutes of one mode, then all of the next (the former layout)
#   KEEP=1          keep the scratch folder (each mode's database and log) and print its path
#   SLICE=60        seconds in a "minute" (shorter only to try the script out)
# Usage: tests/bench/steady_state.sh [build-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
binary=${BINARY:-$build/app/leasehold}
minutes=${MINUTES:-10}
prefill=${PREFILL:-0}
slice=${SLICE:-60}
modes=(${MODES:-disk memory})
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

declare -A pids ports
start() { # mode: starts its service (pre-filled first when asked)
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
  pids[$mode]=$!
  ports[$mode]=$(port_of "$data/out")
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system, in clock ticks

minute() { # mode m: one loaded minute, one row
  local mode=$1 m=$2 data="$work/$1" line rps p50 p99 rss db before cpu
  before=$(cpu_ticks "${pids[$mode]}")
  line=$(wrk -t2 -c50 -d"${slice}s" -s "$here/http/acquire_release.lua" \
    "http://127.0.0.1:${ports[$mode]}" | tail -1)
  rps=$(awk '{print $2}' <<<"$line"); p50=$(awk '{print $4}' <<<"$line"); p99=$(awk '{print $7}' <<<"$line")
  # The service's CPU time per request (all its threads): the machine's neighbours move it far
  # less than they move requests/s.
  cpu=$(awk -v t="$(($(cpu_ticks "${pids[$mode]}") - before))" -v hz="$(getconf CLK_TCK)" \
    -v r="$rps" -v s="$slice" 'BEGIN { printf "%.1f", (r > 0 ? t / hz * 1e6 / (r * s) : 0) }')
  rss=$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/${pids[$mode]}/status")
  db=$( (du -cm "$data"/leasehold.db* 2>/dev/null || true) | tail -1 | awk '{print $1}')
  printf '%-7s %6s %10s %8s %8s %10s %8s %10s\n' "$mode" "$m" "$rps" "$p50" "$p99" "$cpu" "$rss" "${db:-0}"
  echo "$mode $m $rps $p99 $cpu" >> "$work/rates"
}

ledger_query() {
  local agent=did:agent:bench-1-7
  local url="http://127.0.0.1:${ports[disk]}/api/v1/acp/coordination/ledger"
  for _ in 1 2 3; do
    curl -s -o /dev/null -w "ledger?actorDid=$agent&limit=100: %{time_total} s\n" \
      "$url?actorDid=$agent&limit=100"
  done
}

for mode in "${modes[@]}"; do start "$mode"; done
printf '%-7s %6s %10s %8s %8s %10s %8s %10s\n' mode minute "requests/s" "p50 ms" "p99 ms" "CPU us/req" "RSS MiB" "db MiB"
if [ -n "${SEQUENTIAL:-}" ]; then
  for mode in "${modes[@]}"; do for m in $(seq "$minutes"); do minute "$mode" "$m"; done; done
else
  for m in $(seq "$minutes"); do for mode in "${modes[@]}"; do minute "$mode" "$m"; done; done
fi
[ -n "${ports[disk]:-}" ] && ledger_query
for mode in "${modes[@]}"; do kill "${pids[$mode]}"; wait "${pids[$mode]}" 2>/dev/null || true; done
[ "${#modes[@]}" -gt 1 ] || exit 0
awk '{ sum[$1] += $3; n[$1]++; if ($2 == 1) first[$1] = $3; last[$1] = $3;
       if ($4 + 0 > worst[$1]) worst[$1] = $4 + 0; cpu[$1] += $5 * $3 }
     END { printf "on disk / in memory over the run: %.2f\n", sum["disk"] / sum["memory"];
           printf "CPU per request, on disk / in memory: %.2f\n",
                  (cpu["disk"] / sum["disk"]) / (cpu["memory"] / sum["memory"]);
           printf "on disk, last minute / first minute: %.2f\n", last["disk"] / first["disk"];
           printf "worst p99 ms: disk %.2f, memory %.2f\n", worst["disk"], worst["memory"] }' \
  "$work/rates"
