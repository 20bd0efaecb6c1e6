# Kept for bench/level3/run.sh, which sources this path: the set-up lives in bench/common/env.sh.
# shellcheck shell=bash source=../common/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/env.sh"
