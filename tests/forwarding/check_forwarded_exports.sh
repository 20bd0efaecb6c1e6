#!/usr/bin/env bash
# Checks that libblasoffload.so exports the complete BLAS/CBLAS/LAPACK interface, as `nm -D` sees it:
#   1. every dynamic symbol the reference libblas.so.3 and liblapack.so.3 define (functions and CBLAS's two data
#      symbols) is exported by LIB (the std family);
#   2. every function Debian's ILP64 libblas64.so.3 and liblapack64.so.3 define is exported by LIB with the suffix64
#      family's names (dgemm_ there is dgemm_64_ here, cblas_dgemm is cblas_dgemm64_);
#   3. every function LIB exports is one of those, or an accelerated routine's name (abi/routines.def, in any spelling
#      and family), and nothing else.
#
# check_forwarded_exports.sh LIB ROUTINE_LIST CC BLAS LAPACK BLAS64 LAPACK64 [--suffix64-accelerated-pending]
#   --suffix64-accelerated-pending  the accelerated routines' suffix64 names (dgemm_64_) are not exported yet (they
#                                   come with the per-family entry points): they must then be missing, all of them, so
#                                   the option fails once they land and must be dropped.
set -u
lib=$1 list=$2 cc=$3 blas=$4 lapack=$5 blas64=$6 lapack64=$7
pending=0
[ "${8:-}" = --suffix64-accelerated-pending ] && pending=1
status=0

defined() { nm -D --defined-only "$1" | awk '$2 != "A" { print $NF }' | sed 's/@.*//' | sort -u; }
functions() {
  nm -D --defined-only "$1" | awk '$2 == "T" || $2 == "W" || $2 == "i" { print $NF }' | sed 's/@.*//' | sort -u
}

ours=$(defined "$lib")
our_functions=$(functions "$lib")
[ -n "$ours" ] || { echo "FAIL: nm -D found nothing in $lib"; exit 1; }
# The accelerated routines' names without affixes (dgemm), from routines.def as the build expands it.
accelerated=$(printf '#define BO_ENTRY(p, P, name, NAME, T) @@ p##name\n#include "%s"\n' "$list" |
  "$cc" -E -P -x c - | tr ' ' '\n' | awk 'prev == "@@" { print } { prev = $0 }' | sort -u)
[ -n "$accelerated" ] || { echo "FAIL: no accelerated routine expanded from $list"; exit 1; }

std_expected=$(cat <(defined "$blas") <(defined "$lapack") | sort -u)
# suffix64: the functions of the ILP64 libraries, renamed; gfortran's module procedures (__*) exist in std only.
s64_all=$(cat <(functions "$blas64") <(functions "$lapack64") | grep -v '^__' |
  sed -E 's/^(cblas_.*)$/\164_/; t; s/^(.*)_$/\1_64_/' | sort -u)
s64_accelerated=$(for a in $accelerated; do echo "${a}_64_"; echo "cblas_${a}64_"; done | sort -u)
s64_expected=$(comm -23 <(echo "$s64_all") <(echo "$s64_accelerated"))
s64_accel_defined=$(comm -12 <(echo "$s64_all") <(echo "$s64_accelerated"))

echo "$lib exports $(wc -l <<<"$ours") symbols; the reference libraries define $(wc -l <<<"$std_expected")" \
  "(std), the ILP64 ones $(wc -l <<<"$s64_all") functions (suffix64)"

missing=$(comm -23 <(echo "$std_expected") <(echo "$ours"))
if [ -n "$missing" ]; then
  echo "FAIL: $(wc -l <<<"$missing") symbols of the reference libraries are not exported (std family):"
  head -50 <<<"$missing"
  status=1
fi
missing=$(comm -23 <(echo "$s64_expected") <(echo "$ours"))
if [ -n "$missing" ]; then
  echo "FAIL: $(wc -l <<<"$missing") functions of the ILP64 libraries are not exported as suffix64 names:"
  head -50 <<<"$missing"
  status=1
fi
accel_missing=$(comm -23 <(echo "$s64_accel_defined") <(echo "$ours"))
if [ $pending = 1 ]; then
  if [ "$accel_missing" != "$s64_accel_defined" ]; then
    echo "FAIL: some accelerated suffix64 names are exported now; drop --suffix64-accelerated-pending:"
    comm -12 <(echo "$s64_accel_defined") <(echo "$ours")
    status=1
  else
    echo "note: the $(wc -l <<<"$accel_missing") accelerated routines' suffix64 names are not exported yet" \
      "(--suffix64-accelerated-pending)"
  fi
elif [ -n "$accel_missing" ]; then
  echo "FAIL: accelerated routines' suffix64 names not exported:"
  echo "$accel_missing"
  status=1
fi

# Every exported function is a reference name, a suffix64 name, an accelerated routine's name in any spelling,
# the pip wheels' scipy_ families included (abi/families.def; tests/lapack/check_exports.sh checks them one by one), or
# a ScaLAPACK routine the library takes over (src/scalapack/scalapack_list.h).
accel_pattern=$(for a in $accelerated; do printf '%s\n' "$a"; done | paste -sd'|')
scalapack=$(printf '#define BO_SCALAPACK_ENTRY(x, name, T) @@ p##x##name##_\n#include "%s"\n' \
  "$(dirname "$list")/../scalapack/scalapack_list.h" | "$cc" -E -P -x c - | tr ' ' '\n' |
  awk 'prev == "@@" { print } { prev = $0 }' | sort -u)
extra=$(comm -23 <(echo "$our_functions") <(cat <(echo "$std_expected") <(echo "$s64_all") <(echo "$scalapack") |
  sort -u) | grep -viE "^(scipy_)?(cblas_)?(${accel_pattern})(_|_64_|64_)?$")
if [ -n "$extra" ]; then
  echo "FAIL: $lib exports functions no reference library defines and no accelerated routine explains:"
  head -50 <<<"$extra"
  status=1
fi
[ $status -eq 0 ] && echo PASS
exit $status
