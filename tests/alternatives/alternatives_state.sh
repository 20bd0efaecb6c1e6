#!/usr/bin/env bash
# Records the machine's BLAS/LAPACK alternatives before the tests that switch them (privately) and checks after
# them that nothing changed: dpkg's records, the links, no mount left over them, no update-alternatives line added to
# dpkg's log.
#
# alternatives_state.sh snapshot FILE    write the state to FILE
# alternatives_state.sh compare FILE     exit 1, with the differences, unless the state is FILE's
set -euo pipefail
[ $# -eq 2 ] && { [ "$1" = snapshot ] || [ "$1" = compare ]; } ||
  { echo "usage: alternatives_state.sh snapshot|compare FILE" >&2; exit 2; }

state() {
  local n f
  # Every alternative of a BLAS, LAPACK or OpenBLAS library, as update-alternatives and the file system show it.
  for f in /var/lib/dpkg/alternatives/*; do
    n=${f##*/}
    case "$n" in *blas* | *lapack*) ;; *) continue ;; esac
    echo "== $n"
    update-alternatives --query "$n" 2>&1 || true
    echo "/etc/alternatives/$n -> $(readlink "/etc/alternatives/$n" || echo missing)"
    sed -n '2p' "$f" | while read -r link; do echo "$link -> $(readlink "$link" || echo missing)"; done
  done
  echo "== mounts over the alternatives' state"
  awk '$5 ~ "^/etc/alternatives|^/var/lib/dpkg/alternatives|^/var/log/dpkg.log" { print $5 }' /proc/self/mountinfo
  echo "== update-alternatives lines in /var/log/dpkg.log"
  if [ -r /var/log/dpkg.log ]; then grep -c 'update-alternatives' /var/log/dpkg.log || true; else echo none; fi
}

if [ "$1" = snapshot ]; then
  mkdir -p "$(dirname "$2")"
  state >"$2"
  echo "recorded in $2:"
  cat "$2"
else
  [ -r "$2" ] || { echo "FAIL: no snapshot $2 (the setup test alternatives.state_before did not run)"; exit 1; }
  if diff -u "$2" <(state); then
    echo "PASS: the machine's alternatives are as before"
  else
    echo "FAIL: the machine's alternatives changed (above: - before, + now)"
    exit 1
  fi
fi
