#!/usr/bin/env bash
# Installs the Debian 12 packages tensorgl builds and tests with (skips what is already there).
set -euo pipefail
pkgs=(build-essential cmake pkg-config binutils
      libegl-dev libgles-dev libglm-dev libepoxy-dev   # EGL/GLES headers, glm, libepoxy
      libegl-mesa0 libgl1-mesa-dri                      # Mesa EGL + llvmpipe (software GLES)
      googletest libgtest-dev                           # GoogleTest
      python3-numpy python3-pytest                      # Python tests (in /usr/bin/python3)
      python3-matplotlib                                # bench/plot.py charts
      python3-venv python3-pip python3-setuptools       # pip install ./python (docs/python.md)
      clang libclang-rt-14-dev                          # libFuzzer + ASan/UBSan (tools/fuzz.sh)
      g++-multilib                                      # i386 build of the ABI header and loader (abi_layout_ilp32)
      libonnx-dev libprotobuf-dev protobuf-compiler     # runtime/ (ONNX models; skipped without them)
      python3-onnx python3-torch python3-torchvision)   # runtime tests: ONNX's node tests, models exported from PyTorch (samples/models)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
