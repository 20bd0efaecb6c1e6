#!/usr/bin/env bash
# Installs blasoffload into fresh prefixes, a plain one (lib/) from the build under test and a Debian multiarch one
# (lib/x86_64-linux-gnu/) from a second CPU-only build, then in each: builds a C program with find_package and with
# pkg-config, runs it on the installed library (which must find its config file, CUDA module and tuned tables
# there), and checks blasoffload-info's report, a misspelled variable and config key included; the alternative shims
# (a program reaching the library through them finds the prefix's config file) and the two scripts.
# Usage: install_check.sh SOURCE_DIR BUILD_DIR WORK_DIR CMAKE
set -euo pipefail
src=$1 build=$2 work=$3 cmake=${4:-cmake}
ref_blas=/usr/lib/x86_64-linux-gnu/blas/libblas.so.3
rm -rf "$work" && mkdir -p "$work/home" "$work/xdg"
fail() { echo "FAIL: $*"; exit 1; }
expect() {  # expect FILE REGEX WHAT
  grep -Eq -- "$2" "$1" || { echo "--- $1"; cat "$1"; fail "$3 (no line matching '$2')"; }
}
# A clean environment: no user config, no settings from the caller.
for v in $(env | grep -o '^BLASOFFLOAD_[A-Z0-9_]*' || true); do unset "$v"; done
export HOME=$work/home XDG_CONFIG_HOME=$work/xdg

check_prefix() {  # check_prefix PREFIX LIBDIR LABEL CONFIGURED_LIBDIR
  local p=$1 libdir=$2 label=$3 w=$work/$3
  local L=$p/$libdir
  mkdir -p "$w"
  echo "== $label: $p (libdir $libdir)"
  # The layout.
  [ -f "$L/libblasoffload.so.0.1.0" ] || fail "$label: no $L/libblasoffload.so.0.1.0"
  [ "$(readlink "$L/libblasoffload.so.0")" = libblasoffload.so.0.1.0 ] || fail "$label: libblasoffload.so.0 link"
  [ -L "$L/libblasoffload.so" ] || fail "$label: no development link libblasoffload.so"
  # grep reads the whole output (no -q): with pipefail, a grep that quits early can fail the pipeline by SIGPIPE.
  readelf -d "$L/libblasoffload.so.0.1.0" | grep 'SONAME.*\[libblasoffload\.so\.0\]' >/dev/null || fail "$label: SONAME"
  for f in "$L/cmake/blasoffload/blasoffloadConfig.cmake" "$L/cmake/blasoffload/blasoffloadConfigVersion.cmake" \
           "$L/pkgconfig/blasoffload.pc" "$p/bin/blasoffload-info" "$p/bin/blasoffload-calibrate" \
           "$p/share/doc/blasoffload/LICENSE" "$p/share/doc/blasoffload/NOTICE" "$p/share/doc/blasoffload/README.md" \
           "$p/share/doc/blasoffload/blasoffload.conf.sample"; do
    [ -e "$f" ] || fail "$label: $f not installed"
  done
  # Executing the library prints its version instead of crashing.
  "$L/libblasoffload.so" >"$w/run-lib.out" 2>&1 || fail "$label: executing libblasoffload.so failed"
  expect "$w/run-lib.out" "^libblasoffload 0\.1\.0: .*" "$label: ./libblasoffload.so"
  expect "$w/run-lib.out" "blasoffload-info" "$label: ./libblasoffload.so names blasoffload-info"

  # The system config file next to the installation: asks for the summary and the CPU mode.
  mkdir -p "$p/etc"
  printf '# test\nlog = summary\nmode = cpu\n' >"$p/etc/blasoffload.conf"

  # find_package.
  "$cmake" -S "$src/tests/install/consumer" -B "$w/fp" -DCMAKE_PREFIX_PATH="$p" -DCPU_BLAS="$ref_blas" \
    >"$w/fp-configure.log" 2>&1 || { cat "$w/fp-configure.log"; fail "$label: find_package(blasoffload) configure"; }
  "$cmake" --build "$w/fp" >"$w/fp-build.log" 2>&1 || { cat "$w/fp-build.log"; fail "$label: find_package build"; }
  grep -q "$L/libblasoffload.so" "$w/fp-build.log" "$w/fp"/CMakeFiles/consumer.dir/link.txt ||
    fail "$label: the consumer did not link the installed library"
  "$w/fp/consumer" >"$w/fp-run.out" 2>&1 || { cat "$w/fp-run.out"; fail "$label: find_package consumer run"; }
  expect "$w/fp-run.out" "^PASS$" "$label: find_package consumer result"
  expect "$w/fp-run.out" "^blasoffload summary \(pid [0-9]+, mode cpu\)" \
    "$label: the installed library read $p/etc/blasoffload.conf (summary, mode cpu)"
  expect "$w/fp-run.out" "^  sgemm +1 +1 +0 " "$label: the call was intercepted"
  expect "$w/fp-run.out" "^  CPU BLAS: /.* \(loaded by blasoffload: the program links none; " \
    "$label: find_package consumer: the linker dropped the CPU BLAS, the library loaded the system's"

  # pkg-config.
  local flags
  flags=$(PKG_CONFIG_PATH="$L/pkgconfig" pkg-config --cflags --libs blasoffload) || fail "$label: pkg-config"
  [ "$(PKG_CONFIG_PATH="$L/pkgconfig" pkg-config --modversion blasoffload)" = 0.1.0 ] || fail "$label: pc version"
  # The README's relink command, with the linker's default --as-needed: the program calls only blasoffload's symbols,
  # so -lblas is dropped and the library loads the system's CPU BLAS itself.
  # shellcheck disable=SC2086
  cc "$src/tests/install/consumer/consumer.c" -o "$w/pc-consumer" $flags -lblas -lm -Wl,-rpath,"$L" ||
    fail "$label: pkg-config build"
  ! readelf -d "$w/pc-consumer" | grep -E 'NEEDED.*\[libblas\.so' || fail "$label: the linker kept -lblas"
  "$w/pc-consumer" >"$w/pc-run.out" 2>&1 || { cat "$w/pc-run.out"; fail "$label: pkg-config consumer run"; }
  expect "$w/pc-run.out" "^PASS$" "$label: pkg-config consumer result"
  expect "$w/pc-run.out" "^  CPU BLAS: /.* \(loaded by blasoffload: the program links none; " \
    "$label: the library loaded the system's CPU BLAS and said so"
  ldd "$w/pc-consumer" | grep "libblasoffload.so.0 => $L/libblasoffload.so.0" >/dev/null || fail "$label: pc consumer's library"

  # The CUDA module next to the installed library: with mode gpu the library loads it (no GPU here: it says why).
  if [ -e "$L/libblasoffload_cuda.so" ]; then
    BLASOFFLOAD_MODE=gpu BLASOFFLOAD_LOG=summary "$w/pc-consumer" >"$w/gpu-run.out" 2>&1 || fail "$label: gpu-mode run"
    expect "$w/gpu-run.out" "^PASS$" "$label: gpu-mode result"
    if [ ! -e /dev/nvidiactl ]; then
      expect "$w/gpu-run.out" "GPU: unavailable: blasoffload-cuda .*no usable CUDA device \(no NVIDIA driver" \
        "$label: the module was loaded from $L and the missing driver named"
    fi
  fi

  # blasoffload-info, with a misspelled variable, an invalid value and a misspelled key in an explicit config file.
  local rc=0
  BLASOFFLOAD_MDOE=gpu BLASOFFLOAD_TILE=big "$p/bin/blasoffload-info" --no-gpu >"$w/info.out" 2>"$w/info.err" || rc=$?
  [ $rc -eq 1 ] || { cat "$w/info.out" "$w/info.err"; fail "$label: blasoffload-info exit $rc, expected 1 (problems)"; }
  expect "$w/info.out" "^  library: $L/libblasoffload\.so\.0$" "$label: info names the installed library"
  expect "$w/info.out" "^  installation prefix: $p$" "$label: info finds the prefix"
  expect "$w/info.out" "^  config file $p/etc/blasoffload\.conf: read$" "$label: info reads the installed config"
  expect "$w/info.out" "^  BLASOFFLOAD_MODE +cpu +$p/etc/blasoffload\.conf:3$" "$label: value and source of mode"
  expect "$w/info.out" "^  BLASOFFLOAD_LOG +summary +$p/etc/blasoffload\.conf:2$" "$label: value and source of log"
  expect "$w/info.out" "^  BLASOFFLOAD_TILE +2048 +default +\[invalid value 'big' ignored\]" "$label: invalid value"
  expect "$w/info.out" "BLASOFFLOAD_MDOE: unknown setting; did you mean BLASOFFLOAD_MODE\?" "$label: misspelled variable"
  expect "$w/info.out" "BLASOFFLOAD_TILE=big is not an integer >= 1; using 2048" "$label: invalid value warned"
  expect "$w/info.out" "^  sgemm_ from: " "$label: info names the CPU BLAS"
  if [ -e "$L/libblasoffload_cuda.so" ]; then
    expect "$w/info.out" "^  CUDA module: $L/libblasoffload_cuda\.so$" "$label: info finds the module"
    expect "$w/info.out" "^    $p/share/blasoffload/tuned_params: .*\.json" "$label: info finds the tuned tables"
  fi
  [ -e /dev/nvidiactl ] || expect "$w/info.out" "^  not usable: no NVIDIA driver \(libcuda\.so\.1 not found\)$" \
    "$label: info says why there is no GPU"
  # The answers first (GPU, CPU BLAS, problems, settings given), every setting only with --all.
  [ -e /dev/nvidiactl ] || [ "$(sed -n 2p "$w/info.out")" = "  GPU: not used: no NVIDIA driver (libcuda.so.1 not found)" ] ||
    { cat "$w/info.out"; fail "$label: info's second line is not the GPU answer"; }
  expect "$w/info.out" "^  CPU BLAS: /" "$label: info leads with the CPU BLAS"
  ! grep -q "^  BLASOFFLOAD_SGETRF_MIN " "$w/info.out" || fail "$label: info lists a setting at its default without --all"
  "$p/bin/blasoffload-info" --no-gpu --all >"$w/info-all.out" 2>&1 || true
  expect "$w/info-all.out" "^  BLASOFFLOAD_SGETRF_MIN +unset +default$" "$label: --all lists every setting"
  printf 'mdoe = gpu\nBLASOFFLOAD_LGO = debug\n' >"$w/typo.conf"
  rc=0
  BLASOFFLOAD_CONFIG=$w/typo.conf "$p/bin/blasoffload-info" --no-gpu >"$w/info2.out" 2>&1 || rc=$?
  [ $rc -eq 1 ] || fail "$label: blasoffload-info with a misspelled key: exit $rc"
  expect "$w/info2.out" "typo\.conf:1: unknown key 'mdoe'; did you mean 'mode'\?" "$label: misspelled config key"
  expect "$w/info2.out" "typo\.conf:2: unknown key 'BLASOFFLOAD_LGO'; did you mean 'BLASOFFLOAD_LOG'\?" \
    "$label: misspelled full config key"
  check_ways_in "$p" "$libdir" "$label" "$w" "${4:-}"
  "$p/bin/blasoffload-info" --help >"$w/help.out" 2>/dev/null || fail "$label: --help exit status"
  expect "$w/help.out" "^usage: blasoffload-info" "$label: --help on stdout"
  "$p/bin/blasoffload-info" --version | grep -x "blasoffload-info 0.1.0" >/dev/null || fail "$label: --version"
  rc=0
  "$p/bin/blasoffload-calibrate" --out=x --quick --bogus >/dev/null 2>"$w/cal.err" || rc=$?
  [ $rc -eq 2 ] && grep -q "unknown option '--bogus'" "$w/cal.err" || fail "$label: calibrate unknown option"
  echo "   $label: OK"
}

check_ways_in() {  # check_ways_in PREFIX LIBDIR LABEL WORK CONFIGURED_LIBDIR: the shims and the scripts
  local p=$1 libdir=$2 label=$3 w=$4 configured=$5
  local L=$p/$libdir n
  for n in blas lapack; do
    [ -f "$L/blasoffload/lib$n.so.3" ] || fail "$label: no $L/blasoffload/lib$n.so.3"
    [ ! -e "$L/blasoffload/lib$n.so" ] || fail "$label: a development link lib$n.so was installed beside the shim"
    readelf -d "$L/blasoffload/lib$n.so.3" >"$w/shim-$n.dyn"
    expect "$w/shim-$n.dyn" "\(SONAME\) +Library soname: \[lib$n\.so\.3\]$" "$label: lib$n.so.3's SONAME"
    # $ORIGIN/.. for a shim loaded from its directory; the configured libdir for one reached through the alternative's
    # link in /usr/lib (glibc takes $ORIGIN from the link's directory).
    expect "$w/shim-$n.dyn" "\(RUNPATH\) +Library runpath: \[\\\$ORIGIN/\.\.:$configured\]$" \
      "$label: lib$n.so.3's RUNPATH is \$ORIGIN/..:$configured, no padding"
  done
  # A program that needs libblas.so.3 reaches the installed library through the shim, from the shim's own directory
  # and (where the installation is where it was configured for) through a link elsewhere, as the alternative does.
  cc "$src/tests/install/consumer/consumer.c" -o "$w/blas-consumer" -lblas -lm || fail "$label: -lblas build"
  mkdir -p "$w/alt-link"
  ln -sf "$L/blasoffload/libblas.so.3" "$w/alt-link/libblas.so.3"
  local dirs=("$L/blasoffload") d
  [ "$configured" != "$L" ] || dirs+=("$w/alt-link")
  for d in "${dirs[@]}"; do
    LD_LIBRARY_PATH=$d "$w/blas-consumer" >"$w/shim-run.out" 2>&1 || { cat "$w/shim-run.out"; fail "$label: via $d"; }
    expect "$w/shim-run.out" "^PASS$" "$label: the program through the shim in $d"
    expect "$w/shim-run.out" "^blasoffload summary \(pid [0-9]+, mode cpu\)" \
      "$label: through the shim in $d, the library read $p/etc/blasoffload.conf"
    expect "$w/shim-run.out" "^  sgemm +1 +1 +0 " "$label: through the shim in $d, the call was intercepted"
    LD_LIBRARY_PATH=$d ldd "$w/blas-consumer" >"$w/shim-ldd.out"
    expect "$w/shim-ldd.out" "libblasoffload\.so\.0 => $L/(blasoffload/\.\./)?libblasoffload\.so\.0 " \
      "$label: through the shim in $d, the installed library"
  done
  # The scripts.
  "$p/bin/blasoffload-alternatives" status >"$w/alt-status.out" 2>&1 || fail "$label: blasoffload-alternatives status"
  expect "$w/alt-status.out" "^libblas\.so\.3-x86_64-linux-gnu: " "$label: blasoffload-alternatives status"
  "$p/bin/blasoffload-run" --mode auto env >"$w/run-env.out" || fail "$label: blasoffload-run env"
  expect "$w/run-env.out" "^LD_PRELOAD=$(cd "$L" && pwd -P)/libblasoffload\.so\.0$" \
    "$label: blasoffload-run preloads $L's library"
  "$p/bin/blasoffload-run" --mode auto "$w/blas-consumer" >"$w/run.out" 2>&1 || fail "$label: blasoffload-run"
  expect "$w/run.out" "^blasoffload summary \(pid [0-9]+, mode auto\)" \
    "$label: blasoffload-run's --mode over the file's"
}

# 1. A plain prefix, from the build under test.
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
"$cmake" --install "$build" --prefix "$work/plain" >"$work/install-plain.log" 2>&1 ||
  { cat "$work/install-plain.log"; fail "cmake --install"; }
# Installed with --prefix elsewhere: the shims' absolute RUNPATH names the configured prefix's libdir.
configured=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")/${libdir:-lib}
check_prefix "$work/plain" "${libdir:-lib}" plain "$configured"

# 2. A Debian multiarch layout: a CPU-only build configured with libdir lib/x86_64-linux-gnu. The CUDA module and
#    tables of the build under test are put beside it as a packaged module would be, to check they are found there.
ma=$work/multiarch
"$cmake" -S "$src" -B "$work/ma-build" -DCMAKE_INSTALL_PREFIX="$ma" -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu \
  -DBLASOFFLOAD_ENABLE_CUDA=OFF -DBLASOFFLOAD_BUILD_TESTS=OFF -DBLASOFFLOAD_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$work/ma-configure.log" 2>&1 || { cat "$work/ma-configure.log"; fail "configure"; }
"$cmake" --build "$work/ma-build" -j2 >"$work/ma-build.log" 2>&1 || { tail -30 "$work/ma-build.log"; fail "build"; }
"$cmake" --install "$work/ma-build" >"$work/install-ma.log" 2>&1 || { cat "$work/install-ma.log"; fail "install"; }
if [ -e "$build/libblasoffload_cuda.so" ]; then
  cp "$build/libblasoffload_cuda.so" "$ma/lib/x86_64-linux-gnu/"
  mkdir -p "$ma/share/blasoffload/tuned_params" && cp "$src"/tuned_params/*.json "$ma/share/blasoffload/tuned_params/"
fi
check_prefix "$ma" lib/x86_64-linux-gnu multiarch "$ma/lib/x86_64-linux-gnu"
echo "PASS"
