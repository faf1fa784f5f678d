#!/usr/bin/env bash
# Checks that the op table of a document (between <!-- op-table begin --> and <!-- op-table end -->)
# is exactly what the plugins' capability query reports (tensorgl-info --ops-markdown).
# Usage: check_readme_ops.sh <tensorgl-info binary> <document.md> <plugin>...
set -euo pipefail
tool=$1 doc=$2; shift 2
args=(--ops-markdown)
for p in "$@"; do args+=(--plugin "$p"); done
expected=$("$tool" "${args[@]}")
if ! grep -q '<!-- op-table begin -->' "$doc"; then
  echo "$doc has no <!-- op-table begin --> marker" >&2
  exit 1
fi
actual=$(sed -n '/<!-- op-table begin -->/,/<!-- op-table end -->/p' "$doc" | sed '1d;$d')
if [[ "$expected" != "$actual" ]]; then
  echo "the op table of $doc differs from the capability query of: $*" >&2
  diff <(echo "$actual") <(echo "$expected") >&2 || true
  echo "regenerate it with: $tool ${args[*]}" >&2
  exit 1
fi
echo "the op table of $doc matches the capability query of: $*"
