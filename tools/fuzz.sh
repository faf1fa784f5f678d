#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz against the CPU plugin and the GLES plugin (Mesa's
# llvmpipe without a GPU), each for the given time, starting from the corpus in tests/fuzz/corpus;
# the targets of one plugin side by side where there is a core for each, the plugins in turn.
#   tools/fuzz.sh <seconds per target and plugin> [target...]   (targets: fuzz_run_op fuzz_handles)
# Builds build-fuzz (clang, -DTGL_FUZZ=ON: ASan + UBSan everywhere) if needed. Fails (exit 1) on
# any crash, hang (-timeout=10 per input), leak (LeakSanitizer; what Mesa itself leaks is
# suppressed in tools/sanitizers/lsan-fuzz.supp) or sanitizer report; the input that did it is
# written to build-fuzz/crashes/. New interesting inputs go to build-fuzz/corpus/<target>-<plugin>/
# (merge the best into tests/fuzz/corpus/<target>/ with -merge=1, see docs/testing.md, "Fuzzing").
# Environment: TGL_FUZZ_PLUGINS (default "cpu gles"), TGL_FUZZ_BUILD (default <repo>/build-fuzz),
# TGL_FUZZ_ARGS (extra libFuzzer flags, e.g. -seed=1), TGL_FUZZ_JOBS=<n> (n fuzzing processes per
# target and plugin, libFuzzer's -jobs/-workers: a long run on a many-core machine; the executions
# reported are summed over them), TGL_FUZZ_NO_BUILD=1 (use build-fuzz as it is: a machine without
# the compilers, given a build-fuzz made elsewhere).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:?usage: tools/fuzz.sh <seconds per target and plugin> [target...]}
shift
targets=("$@")
((${#targets[@]})) || targets=(fuzz_run_op fuzz_handles)
plugins=(${TGL_FUZZ_PLUGINS:-cpu gles})
build=${TGL_FUZZ_BUILD:-$root/build-fuzz}

if [[ -z ${TGL_FUZZ_NO_BUILD:-} ]]; then
  if [[ ! -f $build/CMakeCache.txt ]]; then
    CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTGL_FUZZ=ON \
      -DTGL_BUILD_TESTS=OFF -DTGL_BUILD_SAMPLES=OFF -DTGL_BUILD_BENCH=OFF >/dev/null || exit 1
  fi
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >/dev/null || {
    echo "fuzz.sh: build failed (cmake --build $build)" >&2; exit 1; }
fi

mkdir -p "$build/crashes"
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:abort_on_error=0:handle_abort=1:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/tools/sanitizers/lsan-fuzz.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
export TGL_CPU_THREADS=${TGL_CPU_THREADS:-2}

# fuzz_one <target> <plugin>: one libFuzzer run; its summary line (and any report) goes to
# $build/fuzz-<target>-<plugin>.summary, its exit status is 1 on any failure.
fuzz_one() {
    local target=$1 plugin=$2
    # Each plugin its own work corpus, seeded from the kept one: libFuzzer runs every input of its
    # corpora before the time limit applies, and a GLES run (about 20 inputs a second on llvmpipe)
    # handed the CPU's finds spent minutes replaying them and none fuzzing (docs/testing.md).
    local work="$build/corpus/$target-$plugin"
    local seeds="$root/tests/fuzz/corpus/$target"
    mkdir -p "$work" "$seeds"
    local log="$build/fuzz-$target-$plugin.log" out="$build/fuzz-$target-$plugin.summary" jobdir=""
    local jobs=() logs=("$log")
    if [[ -n ${TGL_FUZZ_JOBS:-} ]]; then  # each job writes fuzz-<i>.log in the current directory
      jobdir="$build/jobs-$target-$plugin"
      rm -rf "$jobdir" && mkdir -p "$jobdir"
      jobs=(-jobs="$TGL_FUZZ_JOBS" -workers="$TGL_FUZZ_JOBS")
    fi
    (cd "${jobdir:-.}" && TGL_FUZZ_PLUGIN=$plugin TGL_FUZZ_STATS=1 "$build/bin/$target" "$work" "$seeds" \
      -max_total_time="$secs" -timeout=10 -max_len=2048 -len_control=20 -rss_limit_mb=4096 \
      -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$build/crashes/$target-$plugin-" \
      "${jobs[@]}" ${TGL_FUZZ_ARGS:-}) >"$log" 2>&1
    local rc=$?
    if [[ -n ${TGL_FUZZ_JOBS:-} ]]; then
      logs=("$jobdir"/fuzz-*.log)
      # A crashing job does not always fail the parent: any report in a job's log fails the run.
      grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|FUZZ ORACLE' "${logs[@]}" && rc=1
    fi
    local execs=0 rate=0 l e r
    for l in "${logs[@]}"; do
      e=$(sed -n 's/^stat::number_of_executed_units: *//p' "$l" | tail -1)
      r=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$l" | tail -1)
      execs=$((execs + ${e:-0})) rate=$((rate + ${r:-0}))
    done
    local outcomes line="$target $plugin: ${execs:-?} executions, ${rate:-?} exec/s, rc $rc"
    outcomes=$(grep -h -m1 '^fuzz_run_op outcomes' "${logs[@]}" | head -1 | sed 's/^[^:]*: *//')
    {
      ((rc != 0)) && line+=" FAILED"
      echo "$line"
      if ((rc != 0)); then
        grep -h -E -m5 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|FUZZ ORACLE|SUMMARY' "${logs[@]}" | sed 's/^/   /'
        grep -h -E 'Test unit written to' "${logs[@]}" | sed 's/^/   /'
      fi
      [[ -n $outcomes ]] && echo "   run_op statuses: $outcomes"
    } >"$out"
    ((rc == 0))
}

# The targets of one plugin run side by side when there is a core for each (each run is one busy
# thread; CI's 2 cores halve the stage's time), the plugins one after the other, so that the gles
# runs start from what the cpu runs added to the shared corpus.
side_by_side=0
((${#targets[@]} > 1 && $(nproc) >= ${#targets[@]})) && side_by_side=1
status=0
summary=()
for plugin in "${plugins[@]}"; do
  pids=()
  for target in "${targets[@]}"; do
    echo "== $target on $plugin for ${secs}s (log: $build/fuzz-$target-$plugin.log)"
    if ((side_by_side)); then
      fuzz_one "$target" "$plugin" & pids+=($!)
    else
      fuzz_one "$target" "$plugin" || status=1
    fi
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  for target in "${targets[@]}"; do
    cat "$build/fuzz-$target-$plugin.summary"
    summary+=("$(head -1 "$build/fuzz-$target-$plugin.summary")")
  done
done
echo "== fuzz summary (${secs}s per target and plugin)"
printf '%s\n' "${summary[@]}"
exit $status
