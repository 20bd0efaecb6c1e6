#!/usr/bin/env bash
# Makes a fake file system root for BLASOFFLOAD_TEST_CPU_LIBRARY_ROOT, where a process that links no CPU BLAS looks
# for the system's: links standing for the alternatives and the libraries, and dpkg's records of the alternatives.
#
# fake_system_root.sh ROOT [LINK=TARGET | @RECORD=CHOICE:PRIORITY,...]...
#   LINK=TARGET                 ROOT/LINK -> TARGET (LINK relative to ROOT; TARGET as given)
#   @RECORD=CHOICE:PRIORITY,... ROOT/var/lib/dpkg/alternatives/RECORD lists these choices (no followers)
# ROOT is made afresh; with no other argument it stays empty (a system with no CPU BLAS at all).
set -eu
root=$1
shift
rm -rf "$root" && mkdir -p "$root"
for spec in "$@"; do
  name=${spec%%=*} value=${spec#*=}
  if [ "${name:0:1}" = @ ]; then
    record=$root/var/lib/dpkg/alternatives/${name:1}
    mkdir -p "$(dirname "$record")"
    # dpkg's format: status, link (not read), an empty line (no followers), each choice's path and priority, an
    # empty line.
    {
      printf 'auto\n/usr/lib/link\n\n'
      IFS=,
      for c in $value; do printf '%s\n%s\n' "${c%:*}" "${c##*:}"; done
      printf '\n'
    } >"$record"
  else
    mkdir -p "$(dirname "$root/$name")"
    ln -s "$value" "$root/$name"
  fi
done
