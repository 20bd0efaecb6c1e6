#!/usr/bin/env bash
# check_exports.sh LIB ROUTINE_LIST CC [FORWARDED [ILP64]]
# 1. `readelf -d LIB` has no NEEDED entry for CUDA (cuda|cublas|nvrtc): the core loads without a toolkit.
# 2. `nm -D --defined-only LIB` lists exactly the names generated from ROUTINE_LIST (src/routines/routine_list.h,
#    which expands abi/routines.def per precision) in every family of abi/families.def: for each
#    BO_ENTRY(p, P, name, NAME, T), e.g. dgemm: dgemm_, dgemm, DGEMM, DGEMM_ and each family's name (dgemm_64_,
#    scipy_dgemm_64_ ...), and for BLAS routines (BO_BLAS_ENTRY) cblas_dgemm and each family's (cblas_dgemm64_ ...) -
#    and nothing else; ILP64 (the libblasoffload64 build) takes that build's families. The list is made by running
#    ROUTINE_LIST through
#    the C preprocessor, with the LP64 library's ScaLAPACK routines (src/scalapack/scalapack_list.h: pdgetrf_ ...), (so comments and conditionals count as they do in the build); and with FORWARDED (the build's
#    forward/forward_exports.inc) the forwarded names it lists ("daxpy_;"), which tests/forwarding checks against the
#    reference libraries.
set -u
lib=$1 list=$2 cc=$3 forwarded=${4:-} ilp64=${5:-}
families=$(cd "$(dirname "$list")/../../abi" && pwd)/families.def
defs=()
[ "$ilp64" = ILP64 ] && defs=(-DBLASOFFLOAD_ILP64)
status=0

needed=$(readelf -d "$lib" | grep '(NEEDED)') || { echo "FAIL: readelf -d $lib found no NEEDED entries"; exit 1; }
echo "NEEDED entries:"; echo "$needed"
if grep -iE 'cuda|cublas|nvrtc' <<<"$needed"; then
  echo "FAIL: $lib depends on a CUDA library (above)"; status=1
fi

expected=$(cat <<DRIVER | "$cc" -E -P -x c "${defs[@]}" - | tr ' ' '\n' | sed -n 's/^@//p' | sort
#include "$families"
#define BO_FN(fam, fp, fs, cp, cs, I, complete, p, name) @fp##p##name##fs
#define BO_CN(fam, fp, fs, cp, cs, I, complete, p, name) @cp##p##name##cs
#define BO_ENTRY(p, P, name, NAME, T) BO_FAMILIES(BO_FN, p, name) @p##name @P##NAME @P##NAME##_
#define BO_BLAS_ENTRY(p, P, name, NAME, T) BO_FAMILIES(BO_CN, p, name)
#include "$list"
#ifndef BLASOFFLOAD_ILP64
#define BO_SCALAPACK_ENTRY(x, name, T) @p##x##name##_
#include "$(dirname "$list")/../scalapack/scalapack_list.h"
#endif
DRIVER
)
[ -n "$expected" ] || { echo "FAIL: no BO_ENTRY expansions from $list"; exit 1; }
if [ -n "$forwarded" ]; then
  expected=$( (echo "$expected"; sed -n 's/^\([A-Za-z0-9_]*\);$/\1/p' "$forwarded") | sort)
fi
# Version definitions (type A) are not symbols a program can bind to; everything else counts.
actual=$(nm -D --defined-only "$lib" | awk '$2 != "A" { print $NF }' | sed 's/@.*//' | sort)
echo "expected $(wc -l <<<"$expected") exported names from $list, $lib defines $(wc -l <<<"$actual")"
if [ "$expected" != "$actual" ]; then
  echo "FAIL: exported symbols differ (< expected from $list, > defined by $lib):"
  diff <(echo "$expected") <(echo "$actual")
  status=1
fi
[ $status -eq 0 ] && echo PASS
exit $status
