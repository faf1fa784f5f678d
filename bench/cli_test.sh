#!/usr/bin/env bash
# bench_cli: tensorgl-bench's command line. Bad options and values are refused with exit status 2
# and a message naming the option and the value; --help lists the suites and the plugin's ops;
# --version; options take their value as --opt=VALUE or --opt VALUE; the % copy reference is
# sized to the op asked for. Runs on the CPU plugin in a second or two.
# Usage: cli_test.sh <tensorgl-bench> <scratch dir>
set -uo pipefail
bench=$1 dir=$2
mkdir -p "$dir"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect_refusal "<expected message>" args...: exit status 2 and exactly that message on stderr.
expect_refusal() {
  local want=$1; shift
  local err rc
  err=$("$bench" "$@" 2>&1 >/dev/null); rc=$?
  [[ $rc -eq 2 ]] || fail "tensorgl-bench $*: exit status $rc, expected 2 (stderr: $err)"
  [[ "$err" == "tensorgl-bench: $want" ]] || fail "tensorgl-bench $*: stderr \"$err\", expected \"tensorgl-bench: $want\""
}
expect_refusal '--device: expected a device index (an integer from 0), got "abc"' --device=abc
expect_refusal '--device: expected a device index (an integer from 0), got "4294967296"' --device 4294967296
expect_refusal '--device needs a value: --device=VALUE or --device VALUE' --device
expect_refusal '--max-time: expected a positive number of seconds, e.g. 0.5, got "0"' --max-time=0
expect_refusal '--max-time: expected a positive number of seconds, e.g. 0.5, got "2s"' --max-time 2s
expect_refusal '--shape: expected dims that are integers from 0 joined by x, e.g. 4096x4096 (a list: 1024,4096), got "4xq"' --op=add --shape=4xq
expect_refusal '--dtype: expected dtypes among f32, f16, bf16, i32, i8, u8, bool, got "f32,f64"' --dtype f32,f64
expect_refusal '--axis: expected an axis, an integer from -8 to 7, got "one"' --axis=one
expect_refusal '--variant: expected chain, graph, sync, broadcast, causal, cold, warm or dimK, got "fast"' --variant=fast
expect_refusal '--plugin: expected a plugin name (gles, cpu) or a path, got ""' --plugin=
expect_refusal '--quick takes no value (got "--quick=yes")' --quick=yes
expect_refusal 'unknown option "--plugins=cpu" (see --help)' --plugins=cpu
expect_refusal 'option "--c" is ambiguous: --child-first-op, --csv, --compare' --c
expect_refusal 'unexpected argument "cpu" (options start with --; see --help)' cpu
expect_refusal '--compare needs two JSON files: --compare A.json B.json (got 1)' --compare a.json
expect_refusal '--op and --suite exclude each other' --op=add --suite=unary
if "$bench" --suite=nope >/dev/null 2>"$dir/err"; then fail "--suite=nope accepted"; fi
grep -q -- '--suite: expected suites among copy, fill, unary' "$dir/err" || fail "--suite=nope: $(cat "$dir/err")"

out=$("$bench" --version) || fail "--version: exit status $?"
[[ "$out" =~ ^tensorgl-bench\ [0-9]+\.[0-9]+\.[0-9]+\ \(plugin\ ABI\ headers\ 1\.[0-9]+\)$ ]] || fail "--version printed \"$out\""

out=$("$bench" --help --plugin cpu) || fail "--help: exit status $?"
for want in '--plugin=NAME|PATH' '--version' 'suites (--suite' '  matmul     matmul' '  norm       softmax, layer_norm, rms_norm' \
            'ops (--op) of plugin "cpu":' ' softmax,' ' conv2d,' 'pseudo-ops copy'; do
  [[ "$out" == *"$want"* ]] || fail "--help does not print \"$want\""
done
out=$("$bench" --help --plugin=/nonexistent/libtensorgl-x.so 2>&1) || fail "--help with a missing plugin: exit status $?"
[[ "$out" == *'(not listed: '*'/nonexistent/libtensorgl-x.so'* ]] || fail "--help with a missing plugin does not say why the ops are not listed"

# A run with every value given as a separate argument; the copy reference moves what add moves:
# a, b and y of 256 f32 (3 KiB), so a copy of 1536 bytes = 384 f32.
"$bench" --plugin cpu --op add --shape 256 --max-time 0.05 --json "$dir/a.json" --csv "$dir/a.csv" >"$dir/run.log" 2>&1 ||
  fail "--plugin cpu --op add ...: exit status $? ($(tail -3 "$dir/run.log"))"
grep -q '"key": *"buffer_copy 384 f32"' "$dir/a.json" || fail "the copy reference of add 256 is not 384 f32: $(grep -o '"key": *"[^"]*"' "$dir/a.json")"
grep -q '"key": *"add 256 f32"' "$dir/a.json" || fail "no add row in $dir/a.json"
"$bench" --compare "$dir/a.json" "$dir/a.json" >"$dir/cmp1" || fail "--compare A B: exit status $?"
"$bench" --compare="$dir/a.json" "$dir/a.json" --markdown >"$dir/cmp2" || fail "--compare=A B --markdown: exit status $?"
grep -q 'add' "$dir/cmp1" || fail "--compare printed no add row"

if ((failures)); then echo "$failures check(s) failed" >&2; exit 1; fi
echo "bench_cli: all checks passed"
