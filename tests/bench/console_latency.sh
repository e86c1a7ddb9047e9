#!/usr/bin/env bash
# The console under load: the UI thread's event-loop latency (p50/p99/max) with the demo plus
# 2 000 requests a second and 10 000 live leases, 10 s with each of Ledger, Resources, Timeline,
# Wait graph and Holders beside the agent detail shown, each held to p99 < 50 ms, and ~2 000
# requests/s served. A benchmark, not a test: run it on a quiet machine (`top` shows steal).
# Usage: tests/bench/console_latency.sh [build-dir] [rounds]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
rounds=${2:-3}
for round in $(seq "$rounds"); do
  printf 'round %s: ' "$round"
  QT_QPA_PLATFORM=offscreen LEASEHOLD_BENCH_UI=1 \
    "$build/tests/ui/tst_consoledemo" demoFillsEveryViewAndStaysResponsive 2>&1 |
    grep -E 'ui-latency|FAIL' | sed 's/^.*ui-latency: //'
done
