#!/usr/bin/env bash
# ctest bench.device_run_pack: bench/common/device-run.sh leaves at most the 8 files a device call brings back. With
# more in OUTDIR it packs them (folders kept, earlier bundles and its own log left out) into one results-<time>.tar;
# with 8 or fewer it leaves them as they are. The selection is one run.py refuses at once: only the packing runs.
# Usage: check_device_run_pack.sh REPO_ROOT
set -u
root=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/carry" "$w/few/pipeline" "$w/many/pipeline" "$w/many/lapack"
fail() { echo "FAIL: $*"; exit 1; }
for i in 1 2 3; do echo "$i" >"$w/few/pipeline/f$i.md"; done
for i in 1 2 3 4 5; do echo "$i" >"$w/many/pipeline/f$i.md"; echo "$i" >"$w/many/lapack/g$i.md"; done
echo old >"$w/many/results-earlier.tar"
for d in few many; do
  bash "$root/bench/common/device-run.sh" "$w/carry" "$w/$d" nosuch@1 >"$w/$d.log" 2>&1
done
# few: untouched, no bundle.
[ "$(find "$w/few/pipeline" -type f | wc -l)" -eq 3 ] || fail "few: the 3 files were moved"
ls "$w/few"/results-*.tar >/dev/null 2>&1 && fail "few: packed though 8 files or fewer"
# many: one new bundle holding the 10 files with their folders; the earlier bundle and the log stay beside it.
n=$(find "$w/many" -type f | wc -l)
[ "$n" -le 8 ] || fail "many: $n files left (a call brings back 8)"
bundle=$(ls "$w/many"/results-2*.tar 2>/dev/null | head -1)
[ -n "$bundle" ] || fail "many: no results-<time>.tar ($(ls "$w/many"))"
listed=$(tar -tf "$bundle" | sed 's|^\./||' | sort | tr '\n' ' ')
want=$(cd "$w/many" && printf '%s\n' lapack/g{1,2,3,4,5}.md pipeline/f{1,2,3,4,5}.md | sort | tr '\n' ' ')
[ "$listed" = "$want" ] || fail "many: the bundle holds '$listed', not '$want'"
[ "$(cat "$w/many/results-earlier.tar")" = old ] || fail "many: the earlier bundle was packed or changed"
ls "$w/many"/device-run-*.log >/dev/null 2>&1 || fail "many: the run's log was packed"
[ -d "$w/many/pipeline" ] && fail "many: the emptied folders remain"
echo "ok: 3 files left as they were; 10 packed into $(basename "$bundle"), the earlier bundle and the log beside it"
