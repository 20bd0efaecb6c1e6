#!/usr/bin/env bash
# Runs a command with blasoffload as the system's BLAS/LAPACK alternatives, switched by the real
# blasoffload-alternatives (so the real update-alternatives) inside a private mount and PID namespace over private
# copies of the alternatives' state: the machine is never switched, whatever becomes of the test.
#
# in_private_alternatives.sh --tool BLASOFFLOAD_ALTERNATIVES --state DIR [options] -- COMMAND [ARGS...]
#   --state DIR           the private copies go here (emptied first, kept for inspection; not inside the command's
#                         own working directory, which the suites' runners empty)
#   --expect64            the ILP64 pair (libblas64.so.3, liblapack64.so.3) must be switched too
#   --no-install          the private namespace only, alternatives as the machine has them (tests of the tool)
#   --require-symbol LIB:SYMBOL
#                         skip (exit 77) unless LIB defines SYMBOL: a program linked to libblas.so.3 needs the
#                         complete BLAS/LAPACK interface, which the library may not export yet
#   --real-switch         no namespace: switch the machine's alternatives for real and restore them on every exit
#                         path (the fallback where unshare is not available; tests use it inside a namespace)
# Exit status: COMMAND's; 77 (skipped) without root, except under CI (CI=true), where that is a failure.
#
# In the namespace, /etc/alternatives and /var/lib/dpkg/alternatives are bind-mounted over by copies and
# /var/log/dpkg.log by an empty file (update-alternatives logs there). The namespace's mounts end with its last
# process, and its PID namespace takes every process with it when its first one ends: unshare --kill-child ends that
# one when the test is killed.
set -euo pipefail

tool="" state="" expect64=0 install=1 real_switch=0 inside=0 require=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) tool=$2; shift 2 ;;
    --state) state=$2; shift 2 ;;
    --expect64) expect64=1; shift ;;
    --no-install) install=0; shift ;;
    --require-symbol) require+=("$2"); shift 2 ;;
    --real-switch) real_switch=1; shift ;;
    --inside) inside=1; shift ;;  # internal: already in the namespace
    --) shift; break ;;
    *) echo "in_private_alternatives.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$tool" ] && [ -n "$state" ] && [ $# -gt 0 ] ||
  { echo "usage: in_private_alternatives.sh --tool TOOL --state DIR [options] -- COMMAND..." >&2; exit 2; }
[ -x "$tool" ] || { echo "FAIL: $tool is not built" >&2; exit 1; }
multiarch=x86_64-linux-gnu
names=("libblas.so.3-$multiarch" "liblapack.so.3-$multiarch")
[ "$expect64" = 0 ] || names+=("libblas64.so.3-$multiarch" "liblapack64.so.3-$multiarch")

switch_and_run() {
  if [ "$install" = 1 ]; then
    # update-alternatives --install creates a missing alternative's link in /usr/lib, outside the private copies.
    for n in "${names[@]}"; do
      update-alternatives --query "$n" >/dev/null 2>&1 ||
        { echo "FAIL: the alternative $n does not exist here (is its Debian package installed?)" >&2; exit 1; }
    done
    "$tool" install >"$state/install.txt" 2>&1 ||
      { cat "$state/install.txt" >&2; echo "FAIL: $tool install" >&2; exit 1; }
    for n in "${names[@]}"; do
      grep -qE "^$n: .* \(blasoffload, manual\)$" "$state/install.txt" ||
        { cat "$state/install.txt" >&2; echo "FAIL: $tool install did not switch $n" >&2; exit 1; }
    done
    echo "alternatives switched:"
    sed 's/^/  /' "$state/install.txt"
  fi
  "$@"
}

if [ "$inside" = 1 ]; then
  cp -a /etc/alternatives "$state/etc-alternatives"
  cp -a /var/lib/dpkg/alternatives "$state/dpkg-alternatives"
  mount --bind "$state/etc-alternatives" /etc/alternatives
  mount --bind "$state/dpkg-alternatives" /var/lib/dpkg/alternatives
  if [ -e /var/log/dpkg.log ]; then
    : >"$state/dpkg.log"
    mount --bind "$state/dpkg.log" /var/log/dpkg.log
  fi
  switch_and_run "$@"
  exit $?
fi

for r in "${require[@]}"; do
  lib=${r%%:*} sym=${r#*:}
  if ! nm -D --defined-only "$lib" 2>/dev/null | awk -v s="$sym" '$3 == s { f = 1 } END { exit !f }'; then
    echo "SKIP: $lib does not define $sym: a program linked to the system's BLAS/LAPACK needs the complete interface"
    exit 77
  fi
done
if [ "$EUID" -ne 0 ]; then
  if [ "${CI:-}" = true ]; then echo "FAIL: switching alternatives needs root" >&2; exit 1; fi
  echo "SKIP: switching alternatives needs root"
  exit 77
fi
rm -rf "$state" && mkdir -p "$state"
state=$(cd "$state" && pwd -P)
ns=(unshare --mount --propagation private --pid --fork --kill-child --mount-proc)

if [ "$real_switch" = 0 ] && "${ns[@]}" true 2>/dev/null; then
  args=(--tool "$tool" --state "$state" --inside)
  [ "$expect64" = 0 ] || args+=(--expect64)
  [ "$install" = 1 ] || args+=(--no-install)
  exec "${ns[@]}" bash "$0" "${args[@]}" -- "$@"
fi

# The fallback: the machine's alternatives switched for real (ctest runs these tests alone: RUN_SERIAL), each put
# back as it was, manual choice or automatic, on every exit path but SIGKILL.
[ "$real_switch" = 1 ] || echo "note: unshare is not available here: switching the machine's alternatives for real"
for n in "${names[@]}"; do
  q=$(update-alternatives --query "$n" 2>/dev/null || true)
  printf '%s %s %s\n' "$n" "$(sed -n 's/^Status: //p' <<<"$q")" "$(sed -n 's/^Value: //p' <<<"$q")"
done >"$state/before.txt"
child=""
restore() {
  local rc=$? n st val
  trap - EXIT INT TERM HUP
  if [ -n "$child" ]; then kill -TERM -- "-$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; fi
  "$tool" remove >"$state/remove.txt" 2>&1 || { cat "$state/remove.txt" >&2; rc=1; }
  while read -r n st val; do
    if [ "$st" = manual ]; then
      update-alternatives --set "$n" "$val" >/dev/null || rc=1
    elif [ "$st" = auto ]; then
      update-alternatives --auto "$n" >/dev/null || rc=1
    fi
  done <"$state/before.txt"
  echo "alternatives restored"
  exit "$rc"
}
trap restore EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
# In the background, so that a signal interrupts the wait at once, and in a process group of its own (set -m), which
# the trap stops whole.
set -m
switch_and_run "$@" &
child=$!
rc=0
wait "$child" || rc=$?
child=""
exit "$rc"
