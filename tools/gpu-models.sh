#!/usr/bin/env bash
# Model-level speed on the GPU machine (issue 17 section 4; ../shared/device/README.md):
# bench/models.py (ResNet-50 batch 1 and 32, ViT-B/16 batch 8, the GPT-2-style prefill and decode)
# on the GLES plugin, op by op and replayed as a graph, beside PyTorch eager on the same GPU (TF32
# off), then `tensorgl-run --profile` of the row furthest behind. Results in $OUT: models.md,
# models.json, profile.txt, models.log.
#
# Here, once (fills .gl/ with the GL loaders, .gl/rt/ with the runtime's Debian libraries:
# libonnx1, libprotobuf32), and a Release build with the runtime and the Python package:
#   ../shared/device/prepare-gl.sh && tools/gpu-models.sh --prepare
#   cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-gpu tensorgl-run tensorgl_python
# On the GPU machine (carry .gl and build-gpu), from the project root:
#   tools/gpu-models.sh [bench/models.py arguments, e.g. --rows resnet50_b1,gpt2_decode]
# Budget: about 5 minutes (TGL_MODELS_TIMEOUT, default 480 s, bounds it).
set -uo pipefail
if [ "${1:-}" = "--prepare" ]; then
  set -e
  mkdir -p .gl/rt /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update >/dev/null
  (cd .gl/rt && apt-get $o download libonnx1 libprotobuf32 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  ls -1 .gl/rt
  exit 0
fi
build=${TGL_GPU_BUILD:-build-gpu}
out=${OUT:-/tmp}
py=${TGL_PYTHON:-python3}  # the GPU machine's python3 holds torch
mkdir -p "$out"
. tools/gpu-env.sh
export TGL_CACHE_DIR="$(mktemp -d /tmp/tgl-models-cache-XXXXXX)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
start=$(date -u +%s)
timeout "${TGL_MODELS_TIMEOUT:-480}" "$py" bench/models.py --build "$build" --out "$out" --max-warmup 5 "$@" 2>&1 \
  | grep -v -E 'Warning|warnings.warn|_C._jit_pass' | tee "$out/models.log"
rc=${PIPESTATUS[0]}
rm -rf "$TGL_CACHE_DIR"
echo "bench/models.py: exit status $rc, $(( $(date -u +%s) - start )) s; files in $out"
exit "$rc"
