#!/usr/bin/env bash
# Cluster mode on this machine, in one sitting, against a three-member etcd on loopback
# (temporary data, heartbeat 50 ms, election timeout 500 ms):
#   1. durable lease cycles, wrk -t2 -c50 with tests/bench/http/cycles.lua (each acquire grants
#      a new lease, each release gives one back by leaseId; checked from the service's counts), for
#      leasehold on SQLite and leasehold leading on etcd; then etcd's own lock per request
#      (bench_etcd: etcd's lock recipe, one transaction to acquire and one to release, from
#      16 clients). Pairs per second each, so the ratios read off directly.
#   2. failover: KILLS times (default 20) the leader is killed with SIGKILL and the time until
#      the standby's /healthz says "leader" is taken (session TTL 3 s); median and max.
# A benchmark, not a test. Usage: tests/bench/cluster/run.sh [build-dir] [kills]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../../build}
kills=${2:-20}
duration=${DURATION:-10s}
command -v wrk >/dev/null || { echo "install wrk: ./packaging/install-deps.sh --bench"; exit 2; }
command -v etcd >/dev/null || { echo "install etcd: ./packaging/install-deps.sh"; exit 2; }
data=$(mktemp -d)
# Instances started inside $(start ...) are not this shell's jobs: their pid files name them.
trap '{ kill -9 $(jobs -p) $(cat "$data"/*.pid 2>/dev/null); wait; } 2>/dev/null; rm -rf "$data"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port_of() { for _ in $(seq 100); do grep -qo 'listening http://[^ ]*' "$1" && break; sleep 0.1; done
            grep -o 'listening http://[^ ]*' "$1" | grep -o '[0-9]*$'; }
batches() { curl -s --max-time 2 "http://127.0.0.1:$1/metrics" |
            sed -n 's/^leasehold_store_batches_total \([0-9]*\).*/\1/p'; }
role_of() { curl -s --max-time 1 "http://127.0.0.1:$1/healthz" |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["cluster"]["role"])' 2>/dev/null || true; }

clients=() peers=() cluster=""
for i in 0 1 2; do
  clients+=("$(free_port)"); peers+=("$(free_port)")
  cluster+="${cluster:+,}m$i=http://127.0.0.1:${peers[$i]}"
done
for i in 0 1 2; do
  etcd --name "m$i" --data-dir "$data/etcd$i" \
    --listen-client-urls "http://127.0.0.1:${clients[$i]}" --advertise-client-urls "http://127.0.0.1:${clients[$i]}" \
    --listen-peer-urls "http://127.0.0.1:${peers[$i]}" --initial-advertise-peer-urls "http://127.0.0.1:${peers[$i]}" \
    --initial-cluster "$cluster" --heartbeat-interval 50 --election-timeout 500 \
    --logger zap --log-level error > "$data/etcd$i.log" 2>&1 &
done
endpoints="http://127.0.0.1:${clients[0]},http://127.0.0.1:${clients[1]},http://127.0.0.1:${clients[2]}"
for _ in $(seq 100); do
  curl -s --max-time 1 "http://127.0.0.1:${clients[0]}/v3/kv/range" -d '{"key":"eA=="}' | grep -q header && break
  sleep 0.1
done

start() { # name -> port
  "$build/app/leasehold" --headless --open --port 0 --data-dir "$data/$1" --etcd "$endpoints" \
    --session-ttl 3 > "$data/$1.out" 2>&1 &
  echo "$!" > "$data/$1.pid"
  port_of "$data/$1.out"
}

echo "1. durable lease cycles/s (wrk -t2 -c50, $duration each; a cycle is a grant and its release)"
"$build/app/leasehold" --headless --open --port 0 --data-dir "$data/sqlite" > "$data/sqlite.out" 2>&1 &
sqlite=$(port_of "$data/sqlite.out")
a=$(start a)
for _ in $(seq 100); do [ "$(role_of "$a")" = leader ] && break; sleep 0.1; done
for round in 1 2; do
  for which in sqlite etcd; do
    port=$([ $which = sqlite ] && echo "$sqlite" || echo "$a")
    before=$(batches "$port")
    mark=$(python3 "$here/../http/ledgercheck.py" mark "$port")
    out=$(wrk -t2 -c50 -d"$duration" -s "$here/../http/cycles.lua" "http://127.0.0.1:$port")
    line=$(tail -1 <<<"$out")
    after=$(batches "$port")
    python3 "$here/../http/ledgercheck.py" cycles "$port" "$mark" \
      "$(sed -n 's/.* of \([0-9]*\) requests$/\1/p' <<<"$out")" | sed 's/^/    /' ||
      { echo "$out"; exit 1; }
    rps=$(sed -n 's/^requests\/s \([0-9]*\).*/\1/p' <<<"$line")
    printf '  round %s %-7s %6d cycles/s   (%s; %d commits, %s requests a commit)\n' "$round" "$which" \
      "$((rps / 2))" "$line" "$((after - before))" \
      "$(python3 -c "print(round($rps * ${duration%s} / max(1, $after - $before), 1))")"
  done
done
kill "$(cat "$data/a.pid")" 2>/dev/null || true
"$build/tests/etcd/bench_etcd" 5 64 | sed -n 's/^lock per request, 16 clients */  etcd lock per request, 16 clients: /p'

echo "2. failover over $kills leader kills (session TTL 3 s)"
sleep 4 # the stopped instance resigned; a fresh pair stands
a=$(start a); b=$(start b)
for _ in $(seq 100); do [ "$(role_of "$a")" = leader ] && break; sleep 0.1; done
times=()
for kill in $(seq "$kills"); do
  if [ "$(role_of "$a")" = leader ]; then leader=a standby=$b; else leader=b standby=$a; fi
  kill -9 "$(cat "$data/$leader.pid")"
  t0=$(date +%s%N)
  until [ "$(role_of "$standby")" = leader ]; do sleep 0.02; done
  t1=$(date +%s%N)
  times+=($(( (t1 - t0) / 1000000 )))
  port=$(start "$leader")
  if [ "$leader" = a ]; then a=$port; else b=$port; fi
  until [ "$(role_of "$port")" = standby ]; do sleep 0.05; done
  sleep 1 # the new standby's session settles before the next kill
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(sed -n "$(( (kills + 1) / 2 ))p" <<<"$sorted")
max=$(tail -1 <<<"$sorted")
echo "  failover ms: $(tr '\n' ' ' <<<"$sorted")"
echo "  median $median ms, max $max ms"

echo "3. what a redirect costs: 200 acquire/release pairs one after another with curl, straight"
echo "   to the leader, and to the standby following its 307 (--location-trusted keeps the key)"
if [ "$(role_of "$a")" = leader ]; then leader=$a standby=$b; else leader=$b standby=$a; fi
pairs() { # port [curl options] -> median ms of one acquire+release
  for i in $(seq 200); do
    curl -s -o /dev/null -w '%{time_total} ' "${@:2}" -H 'Content-Type: application/json' \
      -d "{\"resource\":\"lock:redirect/$i\",\"actorDid\":\"did:agent:r\",\"ttlMs\":5000}" \
      "http://127.0.0.1:$1/api/v1/acp/coordination/lease"
    curl -s -o /dev/null -w '%{time_total}\n' "${@:2}" -H 'Content-Type: application/json' \
      -d '{"actorDid":"did:agent:r"}' "http://127.0.0.1:$1/api/v1/acp/coordination/release"
  done | awk '{print ($1 + $2) * 1000}' | sort -n | sed -n 100p
}
echo "  median per pair: leader $(pairs "$leader") ms, via the standby $(pairs "$standby" --location-trusted) ms"
