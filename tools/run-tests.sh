#!/usr/bin/env bash
# Sets up, builds, and runs every test (unit, reference suites, integration); GPU tests report as skipped
# on a machine without a GPU. Extra arguments go to ctest (e.g. -L unit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/tools/install-deps.sh"
bash "$root/tools/build.sh"
# No background calibration from the tests' own runs (their decisions must not depend on a file that appears
# mid-suite); the auto-calibration tests turn it on for themselves.
export BLASOFFLOAD_AUTO_CALIBRATE=${BLASOFFLOAD_AUTO_CALIBRATE:-off}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
