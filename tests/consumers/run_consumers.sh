#!/usr/bin/env bash
# Builds and runs the three consumer projects of docs/building.md against tensorgl:
#   1. installs the build into a staging prefix, then moves it (the install must be relocatable);
#   2. find_package: a CMake project with find_package(tensorgl CONFIG) and tensorgl::tensorgl;
#   3. pkg_config:   one compiler command with $(pkg-config --cflags --libs tensorgl);
#   4. add_subdirectory: a CMake project that builds tensorgl from source as a subproject (only
#      libtensorgl and the consumer are built, to keep this test short: it runs with the plugins of
#      the installed prefix through TGL_PLUGIN_PATH).
# Each consumer runs an op on the GLES plugin and exits 0 only when the result is right.
# Usage: run_consumers.sh <tensorgl source dir> <tensorgl build dir> <work dir>
# Environment: CMAKE, CC, CXX (the compilers of the tensorgl build), TGL_CONSUMER_GENERATOR,
# TGL_CONSUMER_LAUNCHER (a compiler launcher such as ccache; may be empty).
set -euo pipefail
src=$1 build=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
cmake=${CMAKE:-cmake}
rm -rf "$work"
mkdir -p "$work"
unset TGL_PLUGIN_PATH TGL_DEVICE
cmake_args=(-G "${TGL_CONSUMER_GENERATOR:-Unix Makefiles}" -DCMAKE_BUILD_TYPE=Release
            -DCMAKE_C_COMPILER="${CC:-cc}" -DCMAKE_CXX_COMPILER="${CXX:-c++}")
if [[ -n ${TGL_CONSUMER_LAUNCHER:-} ]]; then
  cmake_args+=(-DCMAKE_C_COMPILER_LAUNCHER="$TGL_CONSUMER_LAUNCHER" -DCMAKE_CXX_COMPILER_LAUNCHER="$TGL_CONSUMER_LAUNCHER")
fi
step() { echo; echo "== $*"; }
# Runs a command and prints its output only when it fails (the configure and build logs).
quiet() {
  local log
  if ! log=$("$@" 2>&1); then
    echo "$log" >&2
    echo "FAILED: $*" >&2
    return 1
  fi
}

step "install into $work/staging, then move it to $work/prefix"
quiet "$cmake" --install "$build" --prefix "$work/staging"
mv "$work/staging" "$work/prefix"
prefix=$work/prefix
"$prefix/bin/tensorgl-info" --plugin gles --no-ops | grep -E '^  (gles|status|renderer) '

step "find_package(tensorgl CONFIG) consumer"
quiet "$cmake" -S "$here/find_package" -B "$work/find_package" "${cmake_args[@]}" -DCMAKE_PREFIX_PATH="$prefix"
quiet "$cmake" --build "$work/find_package" -j 2
"$work/find_package/consumer"

step "pkg-config consumer"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
echo "pkg-config tensorgl: version $(pkg-config --modversion tensorgl), plugindir $(pkg-config --variable=plugindir tensorgl)"
# shellcheck disable=SC2046  # pkg-config's output is a list of words
"${CC:-cc}" -std=c99 -o "$work/pkg_config_consumer" "$here/pkg_config/main.c" \
  $(pkg-config --cflags --libs tensorgl) -Wl,-rpath,"$(pkg-config --variable=libdir tensorgl)"
"$work/pkg_config_consumer"

step "add_subdirectory consumer (tensorgl built from $src)"
quiet "$cmake" -S "$here/add_subdirectory" -B "$work/add_subdirectory" "${cmake_args[@]}" -DTENSORGL_SOURCE_DIR="$src"
quiet "$cmake" --build "$work/add_subdirectory" -j 2 --target consumer
TGL_PLUGIN_PATH=$(pkg-config --variable=plugindir tensorgl) "$work/add_subdirectory/consumer"

echo
echo "all three consumers built and ran against $prefix"
