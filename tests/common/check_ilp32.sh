#!/usr/bin/env bash
# Compiles the ABI header and the loader for i386 (gcc -m32): the static asserts of plugin_api.h
# and ops.h pin the ILP32 layout. Usage: check_ilp32.sh CC CXX SOURCE_DIR
set -euo pipefail
cc=$1 cxx=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#include <tensorgl/plugin_api.h>\nint n(void) { return (int)sizeof(tgl_plugin_api); }\n' > "$work/api.c"
printf '#include <tensorgl/ops.h>\nint m(void) { return TGL_OP_ADD + (int)sizeof(tgl_op_caps); }\n' > "$work/ops_first.c"
for std in c99 c11; do
  "$cc" -m32 -std=$std -Wall -Wextra -Werror -I"$src/plugin_api" -c "$work/api.c" -o "$work/api.o"
  "$cc" -m32 -std=$std -Wall -Wextra -Werror -I"$src/plugin_api" -c "$work/ops_first.c" -o "$work/ops.o"
done
"$cxx" -m32 -std=c++11 -Wall -Wextra -Werror -I"$src/plugin_api" -x c++ -c "$work/api.c" -o "$work/api_cxx.o"
"$cxx" -m32 -std=c++17 -Wall -Wextra -I"$src/plugin_api" -I"$src/loader/include" \
  -DTGL_PLUGIN_INSTALL_DIR_FULL='"/usr/lib/tensorgl"' -c "$src/loader/src/loader.cpp" -o "$work/loader.o"
echo "the ABI header and the loader compile for i386 (ILP32 layout pins hold)"
