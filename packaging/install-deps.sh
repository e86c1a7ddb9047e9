#!/usr/bin/env bash
# Installs every Debian 12 package Leasehold needs to build, run and test. Idempotent: when all
# of them are present it does nothing (and needs no network).
#   --bench   also what the benchmarks in tests/bench drive the service with (wrk, valgrind's
#             callgrind); the test run needs neither. Not redis: tests/bench/http/run.sh adds
#             its comparison only when redis is present, and Debian's package leaves a redis
#             server enabled at boot, which a bench must not do to a developer's machine
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config git
    qt6-base-dev qt6-httpserver-dev qt6-websockets-dev qt6-charts-dev libqt6opengl6-dev
    libqt6sql6-sqlite libqt6svg6 libgl-dev nlohmann-json3-dev libsqlite3-dev
    libbenchmark-dev
    libfuse3-dev fuse3
    clang libclang-rt-14-dev
    xvfb xauth
    etcd-server etcd-client openssl
    desktop-file-utils appstream librsvg2-bin dpkg-dev
)
case "${1:-}" in
    "") ;;
    --bench) packages+=(wrk valgrind) ;;
    *) echo "usage: $0 [--bench]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js runs the real MCP clients in the tests; any Node >= 18 will do, so Debian's is only
# installed when the machine has none.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    missing+=(nodejs npm)
fi
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
