#!/usr/bin/env bash
# Steady state: Leasehold with its state on disk under wrk's lease cycles (-t2 -c50,
# http/cycles.lua: each acquire grants a new lease, each release gives one back) for
# MINUTES loaded minutes, beside the same with --in-memory, in one sitting. Both services run
# from the start and the loaded minutes alternate (disk, memory, disk, ...), so both see the same
# machine: on a shared machine whose speed drifts by half within an hour, two halves run one
# after the other compare the drift, not the modes. Per loaded minute: requests/s, p50 and p99
# as wrk saw them, the bound 99 % of the requests stayed within as the service timed them (its
# request-duration histogram, in ms), the service's CPU time per request, RSS and the
# database's size (file + WAL), requests per commit and the bound 99 % of the minute's commits
# stayed within, in ms (the durable path's own share of p99, from the service's commit-duration
# histogram), the share of requests the service's own counts show as real cycles (new leases
# and releases, http/ledgercheck.py; a minute whose counts are not cycles fails the run at its
# end), and what the
# machine did meanwhile:
# the share of its CPU time the hypervisor stole and of the time some task waited for I/O
# (/proc/pressure/io), which tell a slow minute of the machine from one of the service. Then a
# filtered ledger query's time, and where the database's size is (each file, its WAL, its free
# pages and partitions), and each service's CPU per request by thread over the run (user +
# system; "main" is the engine thread). Each service's log stays in the scratch folder, whose
# path comes first.
#   MINUTES=10      loaded minutes per mode (the run takes twice as long)
#   PREFILL=N       first fill the on-disk ledger with N events (tests/bench/prefill_ledger.py)
#                   and keep them (retention raised above N)
#   BINARY=path     another leasehold to compare (default: the build's)
#   CONFIG='"k": v' further config keys for every service, e.g. CONFIG='"commitWindowUs": 250'
#   MODES="disk memory"  which services (one mode alone: just that one). A further mode whose
#                   name starts with "disk" is another service on disk with the config keys in
#                   CONFIG_<mode> as well, so two settings are compared minute by minute, e.g.
#                   MODES="disk disk250 memory" CONFIG_disk250='"commitWindowUs": 250'
#                   and its own binary in BINARY_<mode>, so two builds are compared side by side,
#                   e.g. MODES="disk diskold memory" BINARY_diskold=/tmp/leasehold-before
#   SEQUENTIAL=1    all minutes of one mode, then all of the next (the former layout)
#   KEEP=1          keep the databases too (by default only the logs stay)
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
command -v wrk >/dev/null || { echo "install wrk: ./packaging/install-deps.sh --bench"; exit 2; }
work=$(mktemp -d)
echo "scratch folder: $work"
if [ -n "${KEEP:-}" ]; then
  trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
else # the databases are gigabytes after a pre-fill; the logs explain a bad minute
  trap 'kill $(jobs -p) 2>/dev/null || true; rm -f "$work"/*/leasehold*.db*' EXIT
fi

port_of() { for _ in $(seq 600); do grep -qo 'listening http://[^ ]*' "$1" && break; sleep 0.1; done
            grep -o 'listening http://[^ ]*' "$1" | grep -o '[0-9]*$'; }

declare -A pids ports
start() { # mode: starts its service (pre-filled first when asked)
  local mode=$1 data="$work/$1" args=() filled=
  mkdir -p "$data"
  [ "$mode" = memory ] && args+=(--in-memory)
  [[ $mode == disk* ]] && [ "$prefill" -gt 0 ] && filled=1
  local own="CONFIG_$mode" keys=${CONFIG:-} exe="BINARY_$mode"
  exe=${!exe:-$binary}
  [ -n "${!own:-}" ] && keys="${keys:+$keys, }${!own}"
  [ -n "$filled" ] &&
    keys="${keys:+$keys, }\"ledgerRetainRows\": $((prefill * 2)), \"ledgerRetainDays\": 36500"
  if [ -n "$keys" ]; then
    echo "{$keys}" > "$data/config.json"
    args+=(--config "$data/config.json")
  fi
  if [ -n "$filled" ]; then
    "$exe" --headless --open --port 0 --data-dir "$data" "${args[@]}" > "$data/out" 2>&1 &
    port_of "$data/out" > /dev/null; kill $!; wait $! 2>/dev/null || true
    python3 "$here/prefill_ledger.py" "$data/leasehold.db" "$prefill"
  fi
  "$exe" --headless --open --port 0 --data-dir "$data" "${args[@]}" > "$data/out" 2>&1 &
  pids[$mode]=$!
  ports[$mode]=$(port_of "$data/out")
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system, in clock ticks
thread_ticks() { # pid: "thread user system" ticks per thread; the main (engine) thread is "main"
  local t name
  for t in /proc/"$1"/task/*; do
    if [ "${t##*/}" = "$1" ]; then name=main; else name=$(cat "$t/comm" 2>/dev/null) || continue; fi
    # Fields after the name's closing parenthesis: utime and stime are the 12th and 13th.
    sed 's/.*) //' "$t/stat" 2>/dev/null | awk -v n="${name// /_}" '{print n, $12, $13}'
  done
}
machine() { # "stolen total" CPU ticks and the µs some task waited on I/O, so far
  awk '/^cpu / {printf "%s %s ", $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat
  (awk '/^some/ {sub("total=", "", $5); print $5}' /proc/pressure/io 2>/dev/null || echo 0)
}
machine_share() { # before after: "% of CPU time stolen, % of the time some task waited on I/O"
  awk -v a="$1" -v b="$2" -v s="$slice" 'BEGIN { split(a, x, " "); split(b, y, " ")
    printf "%.1f %.1f", (y[2] > x[2] ? 100 * (y[1] - x[1]) / (y[2] - x[2]) : 0),
           (y[3] - x[3]) / s / 1e4 }'
}

metrics() { curl -s "http://127.0.0.1:${ports[$1]}/metrics"; } # mode
commits() { awk '/^leasehold_store_batches_total/ {print $2}' <<<"$1"; } # metrics: so far
histogram() { # metrics name: a histogram so far, "bound count" per line
  sed -n "s/^leasehold_$2_bucket{le=\"\\([^\"]*\\)\"} /\\1 /p" <<<"$1"
}
commit_times() { histogram "$1" store_commit_duration_seconds; }
# Request to answer as the service timed it (a monotonic clock): beside wrk's p99 (wall clock,
# and the client's side too) it tells a slow service from a slow client or a clock that jumped.
served_times() { histogram "$1" http_request_duration_seconds; }

p99_of() { # before after: the bound 99 % of the counts between them stayed within, in ms
  paste -d' ' <(echo "$1") <(echo "$2") | awk '{ b[NR] = $1; n[NR] = $4 - $2 }
    END { if (NR == 0 || n[NR] == 0) { print "-"; exit }
          for (i = 1; i <= NR; i++) if (n[i] >= 0.99 * n[NR]) {
            if (b[i] == "+Inf") print ">5000"; else printf "%g\n", b[i] * 1000; exit } }'
}

minute() { # mode m: one loaded minute, one row
  local mode=$1 m=$2 data="$work/$1" line rps p50 p99 rss db before cpu per shares
  local was now machine0 threads0 mark out requests check real
  before=$(cpu_ticks "${pids[$mode]}")
  mark=$(python3 "$here/http/ledgercheck.py" mark "${ports[$mode]}")
  threads0=$(thread_ticks "${pids[$mode]}")
  machine0=$(machine)
  was=$(metrics "$mode")
  out=$(wrk -t2 -c50 -d"${slice}s" -s "$here/http/cycles.lua" "http://127.0.0.1:${ports[$mode]}")
  line=$(tail -1 <<<"$out")
  now=$(metrics "$mode")
  # What the service recorded: the share of the requests that were new leases or releases.
  requests=$(sed -n 's/.* of \([0-9]*\) requests$/\1/p' <<<"$out")
  check=$(python3 "$here/http/ledgercheck.py" cycles "${ports[$mode]}" "$mark" "$requests" || true)
  echo "$mode $m $check" >> "$work/cycles"
  real=$(sed -n 's/.*(\([0-9.]*\) \/ \([0-9.]*\)).*/\1 \2/p' <<<"$check" | awk '{printf "%.2f", $1 + $2}')
  [[ $check == *"real cycles"* ]] || echo "$mode $m" >> "$work/wrong"
  rps=$(awk '{print $2}' <<<"$line"); p50=$(awk '{print $4}' <<<"$line"); p99=$(awk '{print $7}' <<<"$line")
  # The service's CPU time per request (all its threads): the machine's neighbours move it far
  # less than they move requests/s.
  cpu=$(awk -v t="$(($(cpu_ticks "${pids[$mode]}") - before))" -v hz="$(getconf CLK_TCK)" \
    -v r="$rps" -v s="$slice" 'BEGIN { printf "%.1f", (r > 0 ? t / hz * 1e6 / (r * s) : 0) }')
  rss=$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/${pids[$mode]}/status")
  db=$( (du -cm "$data"/leasehold*.db* 2>/dev/null || true) | tail -1 | awk '{print $1}')
  # Requests per commit (one fsync each): what group commit gathers.
  per=$(awk -v b0="$(commits "$was")" -v b1="$(commits "$now")" -v r="$rps" -v s="$slice" \
    'BEGIN { if (b1 > b0) printf "%.1f", r * s / (b1 - b0); else print "-" }')
  # The machine meanwhile: what the hypervisor stole, how long some task waited on I/O.
  shares=$(machine_share "$machine0" "$(machine)")
  # The served p99, and the commits' own (the durable path's share of p99): bounds in ms.
  printf "$row" "$mode" "$m" "$rps" "$p50" "$p99" \
    "$(p99_of "$(served_times "$was")" "$(served_times "$now")")" "$cpu" "$rss" "${db:-0}" \
    "$per" "$(p99_of "$(commit_times "$was")" "$(commit_times "$now")")" "${real:--}" $shares
  echo "$mode $m $rps $p99 $cpu" >> "$work/rates"
  # Each thread's share of the minute: the same service costs more on a machine whose system
  # calls are dearer, and that moves the engine thread (sockets) far more than the writer (fsync).
  awk -v mode="$mode" -v r="$rps" -v s="$slice" 'NR == FNR { u[$1] = $2; k[$1] = $3; next }
    ($1 in u) { print mode, $1, $2 - u[$1], $3 - k[$1], r * s }' \
    <(echo "$threads0") <(thread_ticks "${pids[$mode]}") >> "$work/threads"
}

ledger_query() {
  local agent=did:agent:bench-1-7
  local url="http://127.0.0.1:${ports[disk]}/api/v1/acp/coordination/ledger"
  for _ in 1 2 3; do
    curl -s -o /dev/null -w "ledger?actorDid=$agent&limit=100: %{time_total} s\n" \
      "$url?actorDid=$agent&limit=100"
  done
}

files() { # mode: where its database's size is: each file, its WAL, free pages and partitions
  local data="$work/$1" f
  for f in "$data"/leasehold.db "$data"/leasehold-ledger.db; do
    [ -f "$f" ] || continue
    python3 - "$f" <<'PY'
import os, sqlite3, sys
path = sys.argv[1]
db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
pages, free, size = (db.execute("PRAGMA " + p).fetchone()[0]
                     for p in ("page_count", "freelist_count", "page_size"))
parts = db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                   "name GLOB 'ledger_p[0-9]*'").fetchone()[0]
wal = os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0
print("%-20s %7.1f MiB, %5.1f %% free pages, WAL %6.1f MiB, %d partitions" % (
    os.path.basename(path), pages * size / 2**20, 100.0 * free / max(pages, 1), wal / 2**20, parts))
PY
  done
}

for mode in "${modes[@]}"; do start "$mode"; done
# Whatever the machine still has to write back (a 5 GB prefill, files deleted just before) is
# written now: its writeback held the first minute's fsyncs for up to a second (p99 300 ms).
sync
row='%-7s %6s %10s %7s %7s %10s %10s %7s %6s %10s %10s %6s %7s %5s\n'
printf "$row" mode minute "requests/s" "p50 ms" "p99 ms" "served p99" "CPU us/req" "RSS MiB" \
  "db MiB" "req/commit" "commit p99" cycles "steal %" "I/O %"
if [ -n "${SEQUENTIAL:-}" ]; then
  for mode in "${modes[@]}"; do for m in $(seq "$minutes"); do minute "$mode" "$m"; done; done
else
  for m in $(seq "$minutes"); do for mode in "${modes[@]}"; do minute "$mode" "$m"; done; done
fi
[ -n "${ports[disk]:-}" ] && ledger_query
for mode in "${modes[@]}"; do [[ $mode == disk* ]] && files "$mode"; done
for mode in "${modes[@]}"; do kill "${pids[$mode]}"; wait "${pids[$mode]}" 2>/dev/null || true; done
# Where each service's CPU went, per thread: user + system µs per request over the run.
for mode in "${modes[@]}"; do
  awk -v mode="$mode" -v hz="$(getconf CLK_TCK)" '$1 == mode { u[$2] += $3; k[$2] += $4; r[$2] += $5 }
    END { for (t in u) if (r[t] > 0 && u[t] + k[t] > 0)
            printf "%s %.1f+%.1f\n", t, u[t] / hz * 1e6 / r[t], k[t] / hz * 1e6 / r[t] }' \
    "$work/threads" | sort | tr '\n' ' ' |
    sed "s/^/CPU us per request by thread (user+system), $mode: /; s/ $/\n/"
done
if [ -s "$work/wrong" ]; then
  echo "NOT real cycles in these minutes (the service's counts: $work/cycles):"; cat "$work/wrong"
  exit 1
fi
[ "${#modes[@]}" -gt 1 ] || exit 0
awk -v order="${modes[*]}" '{ sum[$1] += $3; n[$1]++; if ($2 == 1) first[$1] = $3; last[$1] = $3;
       if ($4 + 0 > worst[$1]) worst[$1] = $4 + 0; cpu[$1] += $5 * $3 }
     END { count = split(order, modes, " ")
           for (i = 1; i <= count; i++) {
             d = modes[i]
             if (d !~ /^disk/ || !("memory" in sum)) continue
             printf "%s / in memory over the run: %.2f\n", d, sum[d] / sum["memory"]
             printf "CPU per request, %s / in memory: %.2f\n", d,
                    (cpu[d] / sum[d]) / (cpu["memory"] / sum["memory"])
             printf "%s, last minute / first minute: %.2f\n", d, last[d] / first[d]
             printf "worst p99 ms: %s %.2f, memory %.2f\n", d, worst[d], worst["memory"] } }' \
  "$work/rates"
