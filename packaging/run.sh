#!/usr/bin/env bash
# Installs what is missing, builds Leasehold and starts it: with a window when a display is
# available, headless otherwise. Extra arguments go to leasehold (e.g. --open --port 0).
set -euo pipefail
cd "$(dirname "$0")/.."

./packaging/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEASEHOLD_BUILD_TESTS=OFF
cmake --build build -j "$(nproc)" --target leasehold

mode=()
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    mode=(--headless)
fi
exec ./build/app/leasehold "${mode[@]}" "$@"
