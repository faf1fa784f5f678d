#!/usr/bin/env bash
# ONNX's node tests on the GPU machine (issue 17 section 2: "on the GPU once"). The GPU machine's
# python3 has numpy but not python3-onnx 1.12, whose generators make the cases, so the cases are
# exported here and carried:
#   PYTHONPATH=build/python /usr/bin/python3 runtime/tools/node_tests.py --export /tmp/nodecases
#   tar cJf build-gpu/nodecases.tar.xz -C /tmp nodecases   (about 1.2 MB)
# with build-gpu holding a Release build's lib/ (libtensorgl_runtime.so, the plugins) and python/
# (the package tensorgl), as for tools/gpu-models.sh. On the GPU machine (carry .gl and build-gpu):
#   tools/gpu-node-tests.sh [node_tests.py arguments, e.g. --ops nn]
# Writes $OUT/onnx-node-tests-gpu.md (the table) and $OUT/node-tests.log.
set -uo pipefail
build=${TGL_GPU_BUILD:-build-gpu}
out=${OUT:-/tmp}
mkdir -p "$out"
. tools/gpu-env.sh
cases=$(mktemp -d /tmp/tgl-nodecases-XXXXXX)
tar xJf "$build/nodecases.tar.xz" -C "$cases"
export TGL_CACHE_DIR="$(mktemp -d /tmp/tgl-node-cache-XXXXXX)"
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
PYTHONPATH=$(realpath "$build")/python python3 runtime/tools/node_tests.py --lib "$build/lib/libtensorgl_runtime.so" \
  --cases "$cases/nodecases" --plugins gles --markdown "$out/onnx-node-tests-gpu.md" \
  --note "On the GPU machine: $gpu (NVIDIA's GLES driver through EGL), the cases exported by python3-onnx 1.12." "$@" \
  2>&1 | tee "$out/node-tests.log"
rc=${PIPESTATUS[0]}
rm -rf "$TGL_CACHE_DIR" "$cases"
exit "$rc"
