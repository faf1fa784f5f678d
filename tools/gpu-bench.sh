#!/usr/bin/env bash
# Benchmarks the GLES plugin against PyTorch on the GPU machine (see ../shared/device/README.md),
# in one command: tensorgl-bench (every suite, full sizes), bench/torch_compare.py (the same rows
# in PyTorch, CUDA events, TF32 off) with the ratio table and each row's target, and bench/plot.py
# (ratios.png, roofline.png). Everything lands in $OUT: gles.json/.csv, torch.json, ratios.md,
# RESULTS.md (a draft of bench/RESULTS.md with date, GPU, driver and command), plots/*.png, logs.
#
# Usage (on the GPU machine, from the project root, with a Release build in build-gpu/):
#   tools/gpu-bench.sh [extra tensorgl-bench arguments, e.g. --suite=matmul,latency]
# Budget: about 8 minutes in all. TGL_BENCH_MAX_TIME (default 1) is the sampling time per case
# in seconds on both sides; TGL_BENCH_TIMEOUT / TGL_TORCH_TIMEOUT (default 300 / 150 s) bound the
# two runs.
set -uo pipefail
build=${TGL_GPU_BUILD:-build-gpu}
out=${OUT:-/tmp}
max_time=${TGL_BENCH_MAX_TIME:-1}
. tools/gpu-env.sh
mkdir -p "$out/plots"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
# The plugin's own program cache starts empty (first_op makes its own cold and warm directories);
# NVIDIA's shader disk cache stays as the driver has it (off for root).
export TGL_CACHE_DIR="$(mktemp -d /tmp/tgl-gpu-bench-cache-XXXXXX)"
# The before columns: issue 19's starting point (TGL_BENCH_BEFORE= for none).
before_file=${TGL_BENCH_BEFORE-bench/baseline-issue19.json}
before=()
[ -n "$before_file" ] && before=("--before=$before_file")
rc=0
start=$(date -u +%s)
cmd=("$build/bin/tensorgl-bench" "--plugin=$build/lib/libtensorgl-gles.so" "--max-time=$max_time"
     "--json=$out/gles.json" "--csv=$out/gles.csv" "$@")
echo "+ ${cmd[*]}" | tee "$out/bench.log"
timeout "${TGL_BENCH_TIMEOUT:-300}" "${cmd[@]}" >> "$out/bench.log" 2> "$out/bench.err" || rc=1
tail -n 60 "$out/bench.log"
echo "tensorgl-bench: $(( $(date -u +%s) - start )) s, exit status $rc"
if [ -f "$out/gles.json" ]; then
  t0=$(date -u +%s)
  timeout "${TGL_TORCH_TIMEOUT:-150}" python3 bench/torch_compare.py --ours="$out/gles.json" \
      --json="$out/torch.json" --markdown="$out/ratios.md" --max-time="$max_time" "${before[@]}" \
      > "$out/torch.log" 2>&1 || rc=1
  tail -n 70 "$out/torch.log"
  echo "torch_compare: $(( $(date -u +%s) - t0 )) s"
  if [ -f "$out/torch.json" ]; then
    python3 bench/plot.py --ours="$out/gles.json" --torch="$out/torch.json" --out="$out/plots" \
        > "$out/plot.log" 2>&1 || echo "plot.py failed (matplotlib?): see plot.log"
    python3 bench/torch_compare.py --ours="$out/gles.json" --torch="$out/torch.json" \
        --markdown="$out/ratios.md" "${before[@]}" > /dev/null 2>&1 || true
  fi
fi
{
  echo "# tensorgl GLES plugin vs PyTorch: results"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- GPU, driver: $(cat "$out/gpu.txt" 2>/dev/null)"
  echo "- command: \`tools/gpu-bench.sh $*\` (tensorgl-bench --max-time=$max_time, then bench/torch_compare.py --ours=gles.json)"
  echo "- commit: ${TGL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)} (set TGL_COMMIT: the device machine's copy of .git may be stale)"
  echo
  cat "$out/ratios.md" 2>/dev/null || echo "(no ratio table: see torch.log)"
  echo
  echo "![ratios](ratios.png) ![roofline](roofline.png)"
} > "$out/RESULTS.md"
rm -rf "$TGL_CACHE_DIR"
echo "total: $(( $(date -u +%s) - start )) s; files in $out"
exit $rc
