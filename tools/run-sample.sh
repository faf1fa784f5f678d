#!/usr/bin/env bash
# Installs dependencies, builds, and runs the C samples on the GLES plugin (Mesa's software driver
# when there is no GPU), each checked against the CPU plugin: a dense layer (matmul_bias_relu.c),
# then one transformer block (transformer_block.c). Usage: tools/run-sample.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
"$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$(nproc)" --target tgl_sample_c tgl_sample_transformer tensorgl_info
"$build/bin/tgl_sample_c" gles
echo
"$build/bin/tgl_sample_transformer" gles
