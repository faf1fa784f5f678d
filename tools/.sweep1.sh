TGL_BENCH_MAX_TIME=0.5 tools/gpu-bench.sh --suite=copy,fill,unary,binary,latency,first_op > $OUT/run.log 2>&1
grep -E "^\| (buffer|relu|exp|gelu|add|mul|first)" $OUT/ratios.md | cut -d'|' -f2-9,15
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
B="build-gpu/bin/tensorgl-bench --plugin=build-gpu/lib/libtensorgl-gles.so --max-time=0.3"
for v in wg128_v4 wg256_v1 wg256_v2 wg256_v8 wg512_v2 wg512_v4 wg1024_v1 wg1024_v4; do
  echo "== $v"; TGL_TUNE_STREAM=$v $B --suite=copy,fill,unary,binary 2>/dev/null | grep -E "^(buffer|relu|add|mul\[)" | awk "{print \$1, \$4, \$7, \$10}" | tr '\n' ';'; echo
done
which perf strace ltrace 2>&1 | head -3
