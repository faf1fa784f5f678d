#!/usr/bin/env bash
# check_secure_getenv.sh dir...
#
# Asserts that the C/C++ sources under each directory read the environment only through
# secure_getenv (which returns NULL in a setuid/setgid or otherwise "secure" process, so that a
# plugin path or option cannot be injected into a privileged host). Any other getenv call -- plain
# getenv, std::getenv, ::getenv -- is listed with its file and line. Exit status 0 when none.
set -u
if [ $# -eq 0 ]; then
  echo "usage: $0 dir..." >&2
  exit 2
fi
status=0
files=0
for dir in "$@"; do
  if [ ! -d "$dir" ]; then
    echo "FAIL $dir: no such directory"
    status=1
    continue
  fi
  while IFS= read -r -d '' f; do
    files=$((files + 1))
    # getenv( not preceded by an identifier character (so secure_getenv( does not match).
    if hits=$(grep -nE '(^|[^A-Za-z0-9_])getenv[[:space:]]*\(' "$f"); then
      while IFS= read -r h; do
        echo "FAIL $f:${h%%:*}: plain getenv: ${h#*:}"
      done <<< "$hits"
      status=1
    fi
  done < <(find "$dir" -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) -print0)
done
[ $status -eq 0 ] && echo "PASS: $files source files under $* read the environment only with secure_getenv"
exit $status
