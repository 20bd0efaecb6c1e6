#!/usr/bin/env bash
# Sets up, builds, and runs every test (unit, reference suites, integration); GPU tests report as skipped
# on a machine without a GPU. Extra arguments go to ctest (e.g. -L unit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/tools/install-deps.sh"
bash "$root/tools/build.sh"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
