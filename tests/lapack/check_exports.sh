#!/usr/bin/env bash
# check_exports.sh LIB ROUTINES_DEF CC
# 1. `readelf -d LIB` has no NEEDED entry for CUDA (cuda|cublas|nvrtc): the core loads without a toolkit.
# 2. `nm -D --defined-only LIB` lists exactly the names generated from ROUTINES_DEF: for each
#    BO_ROUTINE(lower, UPPER): lower_, lower, UPPER, UPPER_, cblas_lower. The list is made by running
#    ROUTINES_DEF through the C preprocessor (so comments and conditionals count as they do in the build).
set -u
lib=$1 def=$2 cc=$3
status=0

needed=$(readelf -d "$lib" | grep '(NEEDED)') || { echo "FAIL: readelf -d $lib found no NEEDED entries"; exit 1; }
echo "NEEDED entries:"; echo "$needed"
if grep -iE 'cuda|cublas|nvrtc' <<<"$needed"; then
  echo "FAIL: $lib depends on a CUDA library (above)"; status=1
fi

expected=$(printf '#define BO_ROUTINE(lower, UPPER) @@ lower UPPER\n#include "%s"\n' "$def" |
  "$cc" -E -P -x c - | awk '$1 == "@@" { print $2 "_"; print $2; print $3; print $3 "_"; print "cblas_" $2 }' | sort)
[ -n "$expected" ] || { echo "FAIL: no BO_ROUTINE entries found in $def"; exit 1; }
# Version definitions (type A) are not symbols a program can bind to; everything else counts.
actual=$(nm -D --defined-only "$lib" | awk '$2 != "A" { print $NF }' | sed 's/@.*//' | sort)
echo "expected $(wc -l <<<"$expected") exported names from $def, $lib defines $(wc -l <<<"$actual")"
if [ "$expected" != "$actual" ]; then
  echo "FAIL: exported symbols differ (< expected from $def, > defined by $lib):"
  diff <(echo "$expected") <(echo "$actual")
  status=1
fi
[ $status -eq 0 ] && echo PASS
exit $status
