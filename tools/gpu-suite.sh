#!/usr/bin/env bash
# Runs the conformance and differential suites of the GLES plugin on the GPU machine (see
# ../shared/device/README.md): unpacks the GL loader packages carried in .gl/, points glvnd at the
# NVIDIA EGL vendor library and writes the logs to $OUT. Usage (on the GPU machine, from the
# project root, with a Release build in build-gpu/): tools/gpu-suite.sh [gtest filter]
set -uo pipefail
build=${TGL_GPU_BUILD:-build-gpu}
out=${OUT:-/tmp}
filter=${1:-*}
. tools/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
rc=0
"$build/bin/tgl_conformance" --plugin="$build/lib/libtensorgl-gles.so" --gtest_filter="$filter" \
    > "$out/conformance_gles.log" 2>&1 || rc=1
tail -n 3 "$out/conformance_gles.log"
"$build/bin/tgl_differential" --reference="$build/lib/libtensorgl-cpu.so" \
    --subject="$build/lib/libtensorgl-gles.so" --gtest_filter="$filter" > "$out/differential.log" 2>&1 || rc=1
tail -n 3 "$out/differential.log"
grep -h "^\[  FAILED  \]" "$out"/*.log | sort -u | head -n 60
exit $rc
