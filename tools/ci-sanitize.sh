#!/usr/bin/env bash
# The test suite under the sanitizers (docs/testing.md, "Sanitizers"):
#   1. build-asan (-DTGL_SANITIZE=address,undefined): the whole ctest suite (conformance on both
#      plugins, differential, loader, support, samples, bench, Python, and the GLES suites again
#      under TGL_GLES_LIMITS=minimum) under ASan + LSan + UBSan, except the softpipe repeats
#      (label softpipe: the same tests and the same code of ours as the minimum run, on another
#      Mesa driver, which Mesa does not instrument; they run in the normal stage) and the big-operand
#      cases (label big: minutes of host work under ASan; the small-window WindowDiff cases run the
#      same code of ours);
#   2. build-tsan (-DTGL_SANITIZE=thread): under TSan, the conformance suite on both plugins (its
#      'Threads*' tests share devices between host threads; and every GLES call crosses to the
#      device's GL thread) and the loader tests (threads loading and failing at once).
# Any sanitizer report, test failure or leak makes it exit nonzero.
# Usage: tools/ci-sanitize.sh [asan|tsan|all]   (build dirs: $TGL_ASAN_BUILD, $TGL_TSAN_BUILD)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
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

if [[ $what == all || $what == asan ]]; then
  echo "== ASan + UBSan: build $asan_build"
  configure "$asan_build" address,undefined
  cmake --build "$asan_build" -j "$jobs"
  echo "== ASan + UBSan: the whole suite"
  export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:$common"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:$common"
  ctest --test-dir "$asan_build" --output-on-failure -j "$jobs" -LE 'softpipe|big'

  unset ASAN_OPTIONS LSAN_OPTIONS
fi

if [[ $what == all || $what == tsan ]]; then
  echo "== TSan: build $tsan_build (plugins, loader, the threaded tests)"
  configure "$tsan_build" thread
  cmake --build "$tsan_build" -j "$jobs" --target tgl_conformance tgl_loader_test
  echo "== TSan: conformance (Threads* and the rest) and loader tests"
  export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:$common"
  for plugin in cpu gles; do
    echo "-- tgl_conformance --plugin=$plugin"
    "$tsan_build/bin/tgl_conformance" --plugin="$tsan_build/lib/libtensorgl-$plugin.so" --gtest_brief=1
  done
  echo "-- tgl_loader_test"
  "$tsan_build/bin/tgl_loader_test"
fi
echo "== sanitizers: clean"
