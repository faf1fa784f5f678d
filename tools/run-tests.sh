#!/usr/bin/env bash
# Installs dependencies, builds everything and runs the whole test suite on both plugins
# (GLES on the software driver when there is no GPU). Usage: tools/run-tests.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
# Each stage's wall time, printed at the end (docs/testing.md, "CI time").
stage_times=()
stage() {  # <name> <command...>
  local t0=$SECONDS
  "${@:2}"
  stage_times+=("$1 $((SECONDS - t0)) s")
}
stage packages "$root/tools/install-deps.sh"
# -g1 (line tables: backtraces still name files and lines) and the test programs at -O1: a build in
# about 40% less compile time than RelWithDebInfo's -O2 -g (docs/testing.md, "CI time").
stage configure cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTGL_TEST_OPTIMIZE=-O1 \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
stage build cmake --build "$build" -j "$(nproc)"
stage ctest ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
stage sanitizers "$root/tools/ci-sanitize.sh" ci   # ASan+UBSan (clang): conformance on both plugins, allocation failures, loader (docs/testing.md: Sanitizers)
stage fuzzing "$root/tools/ci-fuzz.sh"             # fuzzing: each libFuzzer target on each plugin, briefly (the same clang build)
echo "== stage times: $(IFS=,; echo "${stage_times[*]}" | sed 's/,/, /g'); total ${SECONDS} s"
