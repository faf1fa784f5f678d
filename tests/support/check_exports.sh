#!/usr/bin/env bash
# check_exports.sh [--expect "sym1 sym2 ..."] lib...
#
# Asserts that each shared library exports exactly the expected dynamic symbols (default: the
# one plugin entry point, tgl_plugin_init_v1), as listed by `nm -D --defined-only`. Nothing is
# ignored but the section bounds the linker defines for sanitizer coverage (__start___sancov_*,
# __stop___sancov_*: only in a -fsanitize=fuzzer-no-link build, tools/ci-sanitize.sh ci): any other
# defined dynamic symbol (a leaked libstdc++ template, a version node, a helper that forgot
# `static`) is a failure. Exit status 0 when every library passes.
set -u

expect="tgl_plugin_init_v1"
if [ "${1:-}" = "--expect" ]; then
  [ $# -ge 2 ] || { echo "usage: $0 [--expect \"sym ...\"] lib..." >&2; exit 2; }
  expect="$2"
  shift 2
fi
if [ $# -eq 0 ]; then
  echo "usage: $0 [--expect \"sym ...\"] lib..." >&2
  exit 2
fi
command -v nm >/dev/null || { echo "check_exports: nm (binutils) is not installed" >&2; exit 2; }

expected_sorted=$(printf '%s\n' $expect | LC_ALL=C sort -u)
status=0
for lib in "$@"; do
  if [ ! -f "$lib" ]; then
    echo "FAIL $lib: no such file"
    status=1
    continue
  fi
  if ! out=$(nm -D --defined-only "$lib" 2>&1); then
    echo "FAIL $lib: nm -D --defined-only failed: $out"
    status=1
    continue
  fi
  # "<address> <type> <name>" (absolute symbols such as version nodes have the same shape).
  actual_sorted=$(printf '%s\n' "$out" | awk 'NF >= 3 && $3 !~ /^__(start|stop)___sancov_/ { print $3 }' | LC_ALL=C sort -u)
  missing=$(LC_ALL=C comm -23 <(printf '%s\n' "$expected_sorted") <(printf '%s\n' "$actual_sorted") | paste -sd' ')
  extra=$(LC_ALL=C comm -13 <(printf '%s\n' "$expected_sorted") <(printf '%s\n' "$actual_sorted") | paste -sd' ')
  if [ -n "$missing$extra" ]; then
    echo "FAIL $lib: missing: ${missing:-(none)}; unexpected: ${extra:-(none)}"
    status=1
  else
    echo "PASS $lib: exports exactly: $(printf '%s\n' "$expected_sorted" | paste -sd' ')"
  fi
done
exit $status
