#!/usr/bin/env bash
# Installs dependencies, builds everything and runs the whole test suite on both plugins
# (GLES on the software driver when there is no GPU). Usage: tools/run-tests.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
"$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
"$root/tools/ci-sanitize.sh" ci   # ASan+UBSan (clang): conformance on both plugins, allocation failures, loader (docs/testing.md: Sanitizers)
"$root/tools/ci-fuzz.sh"         # fuzzing: each libFuzzer target on each plugin, briefly (the same clang build)
