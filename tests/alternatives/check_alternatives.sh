#!/usr/bin/env bash
# Checks the system-wide ways in, one part per ctest test: the alternative shims as files, the library reached
# through a shim (its CUDA module and config file found), blasoffload-alternatives switching and switching back (in
# a private namespace), its errors, the fallback's restoring, and the launcher blasoffload-run.
#
# check_alternatives.sh PART WORKDIR BUILD_DIR [ARGS...]
#   shims                         the shims' SONAME, DT_NEEDED, RUNPATH and (no) symbols
#   paths PROBE FAKE_MODULE       a copy of the library in a prefix of its own, reached through a copied shim
#   switch PROBE                  install, status, a program, --priority, remove (inside in_private_alternatives.sh)
#   errors                        blasoffload-alternatives' refusals (inside a private namespace too)
#   fallback                      in_private_alternatives.sh --real-switch restores after a failure and a SIGTERM
#   run PROBE                     blasoffload-run
set -euo pipefail
part=$1 work=$2 build=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
tool=$build/blasoffload-alternatives
wrap=(bash "$here/in_private_alternatives.sh" --tool "$tool")
ma=x86_64-linux-gnu
openblas=/usr/lib/$ma/openblas-pthread
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
# expect FILE REGEX WHAT: FILE has a line matching REGEX.
expect() {
  if grep -Eq -- "$2" "$1"; then ok "$3"; else fail "$3 (no line matching /$2/ in $1:)"; sed 's/^/    /' "$1"; fi
}
finish() {
  if [ "$failures" -gt 0 ]; then echo "$failures check(s) failed (files in $work)"; exit 1; fi
  echo PASS
  exit 0
}
# run EXPECTED-STATUS NAME COMMAND...: COMMAND's exit status must be EXPECTED-STATUS; its output goes to NAME.txt.
run() {
  local want=$1 name=$2 rc=0
  shift 2
  "$@" >"$name.txt" 2>&1 || rc=$?
  if [ "$rc" = "$want" ]; then ok "$name: exit status $rc"; else fail "$name: exit status $rc, not $want"; cat "$name.txt"; fi
}
# summary_calls LOG ROUTINE: the calls column of ROUTINE's summary row.
summary_calls() { awk -v r="$2" '$1 == r { print $2 }' "$1" | head -n 1; }
if [ "$part" != switch-inside ] && [ "$part" != errors-inside ] && [ "$part" != fallback-inside ]; then
  rm -rf "$work" && mkdir -p "$work"
fi
cd "$work"
for v in $(compgen -v BLASOFFLOAD_); do unset "$v"; done
unset LD_PRELOAD LD_LIBRARY_PATH

case "$part" in
shims)
  found=0
  for f in "$build"/blasoffload/lib*.so.3; do
    found=$((found + 1))
    name=${f##*/}
    case "$name" in *64.so.3) lib=libblasoffload64.so.0 ;; *) lib=libblasoffload.so.0 ;; esac
    readelf -d "$f" >"$name.dyn"
    expect "$name.dyn" "\(SONAME\) +Library soname: \[$name\]$" "$name: SONAME $name"
    if [ "$(grep -c '(NEEDED)' "$name.dyn")" = 1 ]; then
      expect "$name.dyn" "\(NEEDED\) .*\[$lib\]$" "$name: needs $lib only"
    else
      fail "$name: DT_NEEDED is not $lib alone: $(grep NEEDED "$name.dyn" | tr -s ' ')"
    fi
    # In the build tree CMake may pad the RUNPATH with ':' for the installation's (rewritten by cmake --install).
    expect "$name.dyn" "\(RUNPATH\) +Library runpath: \[\\\$ORIGIN/\.\.:$build:*\]$" "$name: RUNPATH \$ORIGIN/..:$build"
    if syms=$(nm -D --defined-only "$f" 2>/dev/null); then
      [ -z "$syms" ] && ok "$name: defines no symbol" || fail "$name defines symbols: $(head -3 <<<"$syms")"
    else
      fail "nm -D $f failed"
    fi
  done
  [ "$found" -ge 2 ] && [ -e "$build/blasoffload/libblas.so.3" ] && [ -e "$build/blasoffload/liblapack.so.3" ] ||
    fail "the shims libblas.so.3 and liblapack.so.3 are not in $build/blasoffload"
  finish ;;

paths)
  # A prefix of its own: lib/libblasoffload.so.0, lib/libblasoffload_cuda.so (the fake module), lib/blasoffload/
  # (the shims), etc/blasoffload.conf. The shims find the library by $ORIGIN/.. first; the library, reached through
  # them ("lib/blasoffload/../libblasoffload.so.0"), must find its module beside it and the prefix's config file.
  probe=$1 fake=$2
  p=$work/prefix
  mkdir -p "$p/lib/blasoffload" "$p/etc"
  cp "$(readlink -f "$build/libblasoffload.so.0")" "$p/lib/libblasoffload.so.0"
  cp "$fake" "$p/lib/libblasoffload_cuda.so"
  cp "$build/blasoffload/libblas.so.3" "$build/blasoffload/liblapack.so.3" "$p/lib/blasoffload/"
  printf 'mode = gpu\nlog = summary\nlog_file = %s\n' "$work/summary.txt" >"$p/etc/blasoffload.conf"
  export HOME=$work XDG_CONFIG_HOME=$work/xdg FAKE_CUDA_TRACE=$work/trace.txt
  LD_LIBRARY_PATH=$p/lib/blasoffload ldd "$probe" >ldd.txt
  expect ldd.txt "libblasoffload\.so\.0 => $p/lib/blasoffload/\.\./libblasoffload\.so\.0" \
    "the shims' \$ORIGIN/.. found the prefix's library"
  rc=0
  LD_LIBRARY_PATH=$p/lib/blasoffload "$probe" >probe.txt 2>&1 || rc=$?
  [ "$rc" = 0 ] && expect probe.txt '^PASS$' "the probe's results" || { fail "probe exit status $rc"; cat probe.txt; }
  touch summary.txt trace.txt
  expect summary.txt "^blasoffload summary \(pid [0-9]+, mode gpu\)" "the library read $p/etc/blasoffload.conf"
  expect trace.txt "load" "the library loaded the CUDA module beside it ($p/lib/libblasoffload_cuda.so)"
  gpu=$(awk '$1 == "dgemm" { print $4 }' summary.txt)
  [ "${gpu:-0}" -ge 1 ] && ok "dgemm ran on the (fake) GPU: $gpu" || fail "dgemm's gpu column is ${gpu:-missing}"
  expect summary.txt "^  CPU BLAS: $openblas/libblas\.so\.3" "the CPU BLAS is OpenBLAS by path, not the shim"
  finish ;;

switch)
  probe=$1
  "${wrap[@]}" --state "$work/state" -- bash "$0" switch-inside "$work" "$build" "$probe" || failures=$?
  finish ;;
switch-inside)
  probe=$1
  for n in blas lapack; do
    got=$(readlink -f "/usr/lib/$ma/lib$n.so.3")
    [ "$got" = "$(readlink -f "$build/blasoffload/lib$n.so.3")" ] && ok "/usr/lib/$ma/lib$n.so.3 is the shim" ||
      fail "/usr/lib/$ma/lib$n.so.3 resolves to $got"
  done
  "$tool" status >status.txt
  expect status.txt "^libblas\.so\.3-$ma: $build/blasoffload/libblas\.so\.3 \(blasoffload, manual\)$" "status: libblas"
  expect status.txt "^liblapack\.so\.3-$ma: $build/blasoffload/liblapack\.so\.3 \(blasoffload, manual\)$" \
    "status: liblapack"
  ldd "$probe" >ldd.txt
  [ "$(grep -c 'libblasoffload\.so\.0 => ' ldd.txt)" = 1 ] && expect ldd.txt "libblasoffload\.so\.0 => $build/" \
    "one copy of the library, the build's (the shims' absolute RUNPATH)" || { fail "ldd:"; cat ldd.txt; }
  rc=0
  BLASOFFLOAD_LOG=summary BLASOFFLOAD_LOG_FILE=$work/summary.txt BLASOFFLOAD_MODE=cpu "$probe" >probe.txt 2>&1 || rc=$?
  [ "$rc" = 0 ] && expect probe.txt '^PASS$' "the probe ran on the alternative" || { fail "probe: $rc"; cat probe.txt; }
  touch summary.txt
  [ "$(grep -c '^blasoffload summary' summary.txt)" = 1 ] && ok "one summary (one library)" || fail "summaries:"
  [ "$(summary_calls summary.txt dgemm)" = 2 ] && ok "dgemm: 2 calls (Fortran and CBLAS) intercepted" ||
    fail "dgemm calls: $(summary_calls summary.txt dgemm)"
  [ "$(summary_calls summary.txt dgetrf)" = 1 ] && ok "dgetrf: 1 call intercepted" ||
    fail "dgetrf calls: $(summary_calls summary.txt dgetrf)"
  expect summary.txt "^  CPU BLAS: $openblas/libblas\.so\.3" "the CPU BLAS found by path: OpenBLAS"
  expect summary.txt "^  CPU LAPACK: /usr/lib/$ma/(openblas-pthread|lapack)/liblapack\.so\.3" \
    "the CPU LAPACK found by path, not the shim"
  # A priority above OpenBLAS's: the automatic choice.
  "$tool" install --priority 500 >install500.txt
  update-alternatives --query "libblas.so.3-$ma" >query500.txt
  expect query500.txt "^Best: $build/blasoffload/libblas\.so\.3$" "--priority 500 makes the shim the best choice"
  "$tool" remove >remove.txt
  for n in libblas liblapack; do
    update-alternatives --query "$n.so.3-$ma" >"query-$n.txt"
    expect "query-$n.txt" "^Status: auto$" "remove: $n.so.3 back to automatic selection"
    ! grep -q "blasoffload/$n" "query-$n.txt" && ok "remove: no choice of ours left in $n.so.3" ||
      fail "remove left our choice in $n.so.3"
    best=$(sed -n 's/^Best: //p' "query-$n.txt")
    [ "$(readlink -f "/usr/lib/$ma/$n.so.3")" = "$(readlink -f "$best")" ] && ok "$n.so.3 -> $best" ||
      fail "$n.so.3 resolves to $(readlink -f "/usr/lib/$ma/$n.so.3"), not $best"
  done
  expect remove.txt "^libblas\.so\.3-$ma: .* \(not blasoffload, auto\)$" "status after remove"
  "$tool" remove >remove2.txt
  expect remove2.txt "not registered as any alternative" "a second remove says so"
  [ "$failures" = 0 ] || exit 1
  exit 0 ;;

errors)
  "${wrap[@]}" --state "$work/state" --no-install -- bash "$0" errors-inside "$work" "$build" || failures=$?
  finish ;;
errors-inside)
  links() { for f in /etc/alternatives/*blas* /etc/alternatives/*lapack*; do echo "$f -> $(readlink "$f")"; done; }
  before=$(links)
  # A copy of the tool without shims beside it.
  mkdir -p nolib/bin && cp "$tool" nolib/bin/
  run 1 no-shims nolib/bin/blasoffload-alternatives install
  expect no-shims.txt "shim .*/libblas\.so\.3 not found" "no shims: named"
  # No update-alternatives: a PATH with the other tools only.
  mkdir -p path
  for t in bash readlink dirname sed grep head mktemp ln rm ldd id cat; do ln -sf "$(command -v "$t")" path/; done
  run 1 no-update-alternatives env PATH="$work/path" "$tool" install
  expect no-update-alternatives.txt "update-alternatives not found" "no update-alternatives: named"
  # Not root: a copy of the tool and its shims where nobody can reach them (the build tree may be in a private home).
  if command -v runuser >/dev/null; then
    nb=$(mktemp -d /tmp/blasoffload-alternatives-test.XXXXXX)
    trap 'rm -rf "$nb"' EXIT
    chmod 755 "$nb" && mkdir -p "$nb/blasoffload" && cp "$tool" "$nb/" && cp "$build"/blasoffload/lib*.so.3 "$nb/blasoffload/"
    run 1 not-root runuser -u nobody -- "$nb/blasoffload-alternatives" install
    expect not-root.txt "run it as root" "not root: named"
    run 1 not-root-remove runuser -u nobody -- "$nb/blasoffload-alternatives" remove
    run 0 status-not-root runuser -u nobody -- "$nb/blasoffload-alternatives" status
    expect status-not-root.txt "^libblas\.so\.3-$ma: .* \(not blasoffload, (auto|manual)\)$" "status needs no root"
  else
    fail "runuser (util-linux) not found: the not-root checks did not run"
  fi
  run 2 unknown "$tool" switch
  expect unknown.txt "unknown argument 'switch'" "an unknown command: named"
  run 2 bad-priority "$tool" install --priority high
  expect bad-priority.txt "not an integer" "a bad priority: named"
  run 2 no-command "$tool"
  run 0 help "$tool" --help
  expect help.txt "^usage: blasoffload-alternatives install" "--help"
  run 0 version "$tool" --version
  expect version.txt "^blasoffload-alternatives [0-9]+\.[0-9]+\.[0-9]+$" "--version"
  [ "$before" = "$(links)" ] && ok "nothing switched" ||
    fail "the refusals changed the (private) alternatives"
  [ "$failures" = 0 ] || exit 1
  exit 0 ;;

fallback)
  # The fallback switches the alternatives for real: here inside a private namespace, so that the machine is safe.
  "${wrap[@]}" --state "$work/state" --no-install -- bash "$0" fallback-inside "$work" "$build" || failures=$?
  finish ;;
fallback-inside)
  snap() { update-alternatives --query "libblas.so.3-$ma"; update-alternatives --query "liblapack.so.3-$ma"; }
  snap >before.txt
  # A manual choice before: it must come back as manual, not as automatic selection.
  update-alternatives --set "libblas.so.3-$ma" /usr/lib/$ma/blas/libblas.so.3 >/dev/null
  snap >before-manual.txt
  rc=0
  "${wrap[@]}" --state "$work/fb1" --real-switch -- bash -c "$tool status | grep -q '(blasoffload, manual)' && exit 3" \
    >fb1.txt 2>&1 || rc=$?
  [ "$rc" = 3 ] && ok "switched during the command, whose exit status (3) came back" ||
    { fail "fb1: $rc"; cat fb1.txt; }
  snap >after1.txt
  diff before-manual.txt after1.txt >/dev/null && ok "restored after a failing command (manual choice kept)" ||
    { fail "not restored:"; diff before-manual.txt after1.txt || true; }
  update-alternatives --auto "libblas.so.3-$ma" >/dev/null
  "${wrap[@]}" --state "$work/fb2" --real-switch -- sleep 300 >fb2.txt 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q '(blasoffload, manual)' <("$tool" status) && break; sleep 0.1; done
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  [ "$rc" = 143 ] && ok "SIGTERM: exit status 143" || { fail "fb2: $rc"; cat fb2.txt; }
  snap >after2.txt
  diff before.txt after2.txt >/dev/null && ok "restored after SIGTERM" ||
    { fail "not restored after SIGTERM:"; diff before.txt after2.txt || true; }
  # This PID namespace's /proc: only the test's own processes.
  left=""
  for f in /proc/[0-9]*/cmdline; do [ "$(tr '\0' ' ' 2>/dev/null <"$f")" != "sleep 300 " ] || left+=" $f"; done
  [ -z "$left" ] && ok "the command was stopped" || fail "sleep 300 still runs: $left"
  [ "$failures" = 0 ] || exit 1
  exit 0 ;;

run)
  probe=$1
  launcher=$build/blasoffload-run
  lib=$(readlink -f "$build")/libblasoffload.so.0
  run 0 help "$launcher" --help
  expect help.txt "^usage: blasoffload-run \[OPTIONS\] \[--\] PROGRAM" "--help"
  run 0 version "$launcher" --version
  expect version.txt "^blasoffload-run [0-9]+\.[0-9]+\.[0-9]+$" "--version"
  run 2 no-program "$launcher" --mode cpu
  run 2 bad-mode "$launcher" --mode fast true
  expect bad-mode.txt "--mode 'fast': expected one of auto\|gpu\|cpu" "a bad mode: named"
  run 2 bad-log "$launcher" --log=loud true
  run 2 unknown "$launcher" --fast true
  expect unknown.txt "unknown option '--fast'" "an unknown option: named"
  run 127 not-found "$launcher" -- --no-such-program
  expect not-found.txt "--no-such-program: command not found" "'--' ends the options; a missing program: named"
  run 7 status "$launcher" sh -c 'exit 7'
  run 143 signal "$launcher" sh -c 'kill -TERM $$'
  # LD_PRELOAD: the library first, what was there kept; the settings as the variables the library reads.
  LD_PRELOAD=/lib/$ma/libm.so.6 run 0 env "$launcher" --mode=gpu --log calls --log-file "$work/x.log" env
  expect env.txt "^LD_PRELOAD=$lib:/lib/$ma/libm\.so\.6$" "LD_PRELOAD: the library prepended"
  expect env.txt "^BLASOFFLOAD_MODE=gpu$" "--mode"
  expect env.txt "^BLASOFFLOAD_LOG=calls$" "--log"
  expect env.txt "^BLASOFFLOAD_LOG_FILE=$work/x\.log$" "--log-file"
  run 0 env2 "$launcher" env
  ! grep -E '^BLASOFFLOAD_' env2.txt && expect env2.txt "^LD_PRELOAD=$lib$" "no option: no setting, LD_PRELOAD alone" ||
    fail "settings without options"
  # The probe (linked to the reference BLAS/LAPACK) under the launcher, through a symlink to it.
  mkdir -p bin && ln -sf "$launcher" bin/blasoffload-run
  run 0 summary bin/blasoffload-run --mode cpu --summary "$probe"
  expect summary.txt "^PASS$" "the probe's results"
  expect summary.txt "^blasoffload summary \(pid [0-9]+, mode cpu\)" "--summary, --mode cpu (through a symlink)"
  # 2 or more: the reference cblas_dgemm calls dgemm_, which comes back through the library.
  n=$(summary_calls summary.txt dgemm)
  [ "${n:-0}" -ge 2 ] && ok "dgemm intercepted: $n" || fail "dgemm: ${n:-no row}"
  n=$(summary_calls summary.txt dgetrf)
  [ "$n" = 1 ] && ok "dgetrf intercepted" || fail "dgetrf: ${n:-no row}"
  finish ;;

*) echo "check_alternatives.sh: unknown part $part" >&2; exit 2 ;;
esac
