#!/usr/bin/env bash
# The tests under the sanitizers (docs/testing.md, "Sanitizers"). Any sanitizer report, test failure
# or leak makes it exit nonzero. Usage: tools/ci-sanitize.sh [ci|asan|tsan|full]
#   ci    (what .ci/run runs; the default): one clang build, build-fuzz (-DTGL_FUZZ=ON: ASan + UBSan
#         everywhere, shared with tools/fuzz.sh, which CI runs next), with the conformance suite on
#         both plugins and again under TGL_GLES_LIMITS=minimum, allocation-failure injection and the
#         loader tests (labels conformance, loader) under ASan + LSan + UBSan. One build serves the
#         sanitized tests and the fuzzing, which keeps CI within its time on 2 cores.
#   asan  build-asan (gcc, -DTGL_SANITIZE=address,undefined): the ctest suite (conformance on both
#         plugins and under the minimum limits, allocation-failure injection, loader, support,
#         samples, bench, Python) with the differential suite in its short form (label diff_short:
#         every case but the large ones, tests/differential/CMakeLists.txt). Not repeated here: the
#         softpipe runs (the same code of ours on another Mesa driver, which Mesa does not
#         instrument) and the large differential cases (ten minutes of host work under ASan); they
#         run in the normal stage. TGL_SANITIZE_FULL=1: the whole differential suite too.
#   tsan  build-tsan (-DTGL_SANITIZE=thread): under TSan, the conformance tests that share devices
#         between host threads or race a device's GL thread (Threads, Faults, Frame, GraphTest,
#         BufferTest; every GLES call crosses to the GL thread) on both plugins, the loader tests
#         (threads loading and failing at once) and the plugin lifetime tests
#         (first opens racing). TGL_SANITIZE_FULL=1: the whole conformance suite.
#   full  asan and tsan: run before a release and whenever threads, memory or the loader change.
# Build dirs: $TGL_FUZZ_BUILD (build-fuzz), $TGL_ASAN_BUILD (build-asan), $TGL_TSAN_BUILD (build-tsan).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-ci}
case $what in ci|asan|tsan|full) ;; *) echo "usage: tools/ci-sanitize.sh [ci|asan|tsan|full]" >&2; exit 2;; esac
fuzz_build=${TGL_FUZZ_BUILD:-$root/build-fuzz}
asan_build=${TGL_ASAN_BUILD:-$root/build-asan}
tsan_build=${TGL_TSAN_BUILD:-$root/build-tsan}
supp=$root/tools/sanitizers
jobs=$(nproc)
"$root/tools/install-deps.sh"

# -O1 -g1: line tables are enough for symbolised reports, and compile at half the cost of -O2 -g.
configure() {  # <build dir> <sanitizers>
  cmake -S "$root" -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTGL_SANITIZE="$2" \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" >/dev/null
}

# Reports end the process with exit code 66 (ASan/LSan/TSan) or an error (UBSan, no recovery).
common="exitcode=66:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:$common"
asan_options="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:$common"

if [[ $what == ci ]]; then
  echo "== ASan + UBSan (clang, $fuzz_build): build the plugins, the loader and their tests"
  if [[ ! -f $fuzz_build/CMakeCache.txt ]]; then
    CC=clang CXX=clang++ cmake -S "$root" -B "$fuzz_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTGL_FUZZ=ON \
      -DTGL_BUILD_SAMPLES=OFF -DTGL_BUILD_BENCH=OFF -DTGL_BUILD_PYTHON=OFF >/dev/null
  fi
  # -O1 -g1 as configure() below: a fifth less compile time than RelWithDebInfo's -O2 -g under clang.
  cmake -S "$root" -B "$fuzz_build" -DTGL_BUILD_TESTS=ON \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >/dev/null
  cmake --build "$fuzz_build" -j "$jobs" --target tensorgl_cpu tensorgl_gles tgl_conformance tgl_alloc_fail \
        tgl_loader_test tgl_wrapper_test tgl_plugins_test tgl_common_test tgl_op_families_test
  echo "== ASan + UBSan: conformance (cpu, gles, gles minimum), allocation failures, loader"
  ASAN_OPTIONS=$asan_options LSAN_OPTIONS="suppressions=$supp/lsan.supp:$common" \
    ctest --test-dir "$fuzz_build" --output-on-failure -j "$jobs" -L 'conformance|loader' -LE softpipe
fi

if [[ $what == full || $what == asan ]]; then
  echo "== ASan + UBSan: build $asan_build"
  configure "$asan_build" address,undefined
  cmake --build "$asan_build" -j "$jobs"
  echo "== ASan + UBSan: the whole suite"
  export ASAN_OPTIONS=$asan_options
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:$common"
  skip='softpipe|big|differential'
  [[ -n ${TGL_SANITIZE_FULL:-} ]] && skip='softpipe|big|diff_short'
  ctest --test-dir "$asan_build" --output-on-failure -j "$jobs" -LE "$skip"

  unset ASAN_OPTIONS LSAN_OPTIONS
fi

if [[ $what == full || $what == tsan ]]; then
  echo "== TSan: build $tsan_build (plugins, loader, the threaded tests)"
  configure "$tsan_build" thread
  cmake --build "$tsan_build" -j "$jobs" --target tgl_conformance tgl_loader_test tgl_plugins_test
  echo "== TSan: conformance (Threads* and the rest) and loader tests"
  export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:$common"
  threaded='Threads.*:Faults.*:Frame.*:GraphTest.*:BufferTest.*'
  [[ -n ${TGL_SANITIZE_FULL:-} ]] && threaded='*'
  for plugin in cpu gles; do
    echo "-- tgl_conformance --plugin=$plugin --gtest_filter=$threaded"
    "$tsan_build/bin/tgl_conformance" --plugin="$tsan_build/lib/libtensorgl-$plugin.so" --gtest_brief=1 \
      --gtest_filter="$threaded"
  done
  echo "-- tgl_loader_test"
  "$tsan_build/bin/tgl_loader_test"
  # Both plugins in one process, first opens racing for the probe's context, exits with busy
  # threads: those exit on purpose with threads running, so thread leaks are not reports there.
  echo "-- tgl_plugins_test"
  TSAN_OPTIONS="$TSAN_OPTIONS:report_thread_leaks=0" "$tsan_build/bin/tgl_plugins_test"
fi
echo "== sanitizers: clean"
