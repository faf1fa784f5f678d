#!/usr/bin/env bash
# Checks that the op table of a Markdown file (docs/ops.md) is exactly what the plugins' capability
# query reports. Usage: check_readme_ops.sh <tgl_ops binary> <file.md> <plugin>...
set -euo pipefail
tool=$1 readme=$2; shift 2
expected=$("$tool" "$@")
actual=$(sed -n '/<!-- op-table begin -->/,/<!-- op-table end -->/p' "$readme" | sed '1d;$d')
if [[ "$expected" != "$actual" ]]; then
  echo "$readme: the op table differs from the capability query of: $*" >&2
  diff <(echo "$actual") <(echo "$expected") >&2 || true
  echo "regenerate it with: $tool $*" >&2
  exit 1
fi
echo "$readme: the op table matches the capability query of: $*"
