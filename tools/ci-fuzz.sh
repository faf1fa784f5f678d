#!/usr/bin/env bash
# CI's short fuzzing stage: builds build-fuzz (clang, ASan+UBSan) and runs each libFuzzer target on
# each plugin (cpu, gles on llvmpipe) for TGL_CI_FUZZ_SECONDS (default 15) from the kept corpus.
# Any crash, hang, leak or sanitizer report fails the stage (tools/fuzz.sh says which input).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
start=$SECONDS
"$root/tools/fuzz.sh" "${TGL_CI_FUZZ_SECONDS:-15}"
echo "ci-fuzz: $((SECONDS - start)) s (build and fuzzing)"
