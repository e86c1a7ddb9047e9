#!/bin/sh
# The filesystem gate's benchmark: git status, git grep, find, a compile of engine/core, 2 000
# small files, cp -r and rm -rf, each inside the gate / outside it on the same tree, plus the
# gate's memory at 100 000 files. Not run by CI. Needs root and /dev/fuse.
#
#   tests/bench/fs/run.sh [build-dir]          (default /work/build-fs)
#   ROUNDS=5 COPIES=16 ONLY="git" GATE_FLAGS="--no-readdirplus" tests/bench/fs/run.sh
#   CONFIGS="zero-open=;handles=--handles" COUNT=1 ONLY="git grep" tests/bench/fs/run.sh
#       (gates side by side in one sitting; COUNT=1: FUSE requests per run, by opcode)
#
# Build the harness first: ninja -C <build-dir> gatefs_harness
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-/work/build-fs}
harness="$build/tests/bench/gatefs_harness"
if [ ! -x "$harness" ]; then
    echo "no $harness: ninja -C $build gatefs_harness" >&2
    exit 1
fi
if [ "$(id -u)" != 0 ]; then
    echo "run.sh needs root (mounting with allow_other, 100 000 descriptors)" >&2
    exit 1
fi
exec python3 "$here/bench.py" --harness "$harness" --source "$here/../../.."
