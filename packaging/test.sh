#!/usr/bin/env bash
# Installs what is missing, builds Leasehold twice and runs every test in both builds:
#   build       optimised, with the console window; also packaged, and the package installed
#               and run; and soaked for two minutes by 1 000 simulated agents
#   build-asan  clang, AddressSanitizer + UndefinedBehaviorSanitizer, LEASEHOLD_GUI=OFF: the
#               headless binary servers run (no Qt Widgets, which its tests check), with every
#               non-UI test; the same build makes the libFuzzer targets (tests/fuzz), whose
#               corpora replay as tests and which then fuzz for a bounded time each
set -euo pipefail
cd "$(dirname "$0")/.."

./packaging/install-deps.sh

# The MCP client tests' packages, exactly as locked (no network access beyond the registry).
npm ci --prefix tests/mcp --no-audit --no-fund --loglevel=error

# The coding-agent CLIs the hook tests drive (tests/agents), each at its pinned version, cached
# outside the clone: a second run costs nothing and needs no network. Bounded: a stuck registry
# fails the run instead of stalling it.
if [ -z "${LEASEHOLD_AGENT_CACHE:-}" ]; then
    LEASEHOLD_AGENT_CACHE=/var/cache/leasehold/agents
    mkdir -p "$LEASEHOLD_AGENT_CACHE" 2>/dev/null && [ -w "$LEASEHOLD_AGENT_CACHE" ] ||
        LEASEHOLD_AGENT_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/leasehold/agents"
fi
export LEASEHOLD_AGENT_CACHE
timeout 600 ./tests/agents/install.sh >/dev/null

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEASEHOLD_WERROR=ON \
    -DLEASEHOLD_REQUIRE_NODE_TESTS=ON -DLEASEHOLD_REQUIRE_ETCD_TESTS=ON
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"
# The Debian package: built, inspected, installed on this machine and run from /usr/bin.
./packaging/check-deb.sh build
# The soak, bounded (tests/bench/soak/soak.mjs runs for 10 minutes by default): 1 000 agents
# for 2 minutes against the optimised build on disk, its console open on an Xvfb display.
node tests/bench/soak/soak.mjs --binary build/app/leasehold --minutes 2 --agents 1000 --console

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLEASEHOLD_WERROR=ON \
    -DCMAKE_CXX_COMPILER=clang++ -DLEASEHOLD_FUZZ=ON \
    -DLEASEHOLD_SANITIZE=address,undefined -DLEASEHOLD_BUILD_BENCHMARKS=OFF \
    -DLEASEHOLD_GUI=OFF -DLEASEHOLD_REQUIRE_NODE_TESTS=ON -DLEASEHOLD_REQUIRE_ETCD_TESTS=ON
cmake --build build-asan -j "$jobs"
# The real agent CLIs (label agents) ran against the optimised build above; under the
# sanitizers the hook code they reach is covered by tst_hooks and the fuzzers, minutes cheaper.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE agents
# Each fuzz target for a bounded time on its corpus (LEASEHOLD_FUZZ_SECONDS, default 45).
./tests/fuzz/run.sh build-asan "${LEASEHOLD_FUZZ_SECONDS:-45}"
