#!/usr/bin/env python3
"""Which differential cases a repeat of the suite in another mode (TGL_GLES_LIMITS=minimum, softpipe)
needs: those whose GLES dispatch plan differs from the default run's, and for every op the fastest
case that runs it. Writes the others as a skip list (TGL_TEST_SKIP_LIST, tests/differential/main.cpp).

A plan is the sequence of a case's dispatches as TGL_GLES_TEST_PLAN_TRACE records them (op, program
file and defines, workgroup counts; backends/gles/test_hooks.h), and its refusals. Compared with the
workgroup size abstracted (WG_SIZE=256 and 128 name one program written for any size, and the
workgroup counts scale with it): two plans are the same when they run the same programs with the
same defines, in the same order, in as many dispatches. Anything else differs: another tile, kernel,
number of passes or pieces, a pass split for the 4 SSBO blocks, a dispatch cut at the workgroup-count
limit, a refusal.

Usage (both runs with one TGL_TEST_SEED, so that they draw the same cases):
  TGL_TEST_SEED=7 TGL_GLES_TEST_PLAN_TRACE=default.txt tgl_differential ... > default.log
  TGL_TEST_SEED=7 TGL_GLES_TEST_PLAN_TRACE=minimum.txt TGL_GLES_LIMITS=minimum tgl_differential ... > minimum.log
  tools/plan-cases.py --default default.txt --mode minimum.txt --log minimum.log --within default.log \
      --within minimum.log --out skip.txt
--same-plan-as-default: the mode's plans are taken to be the default trace's own (softpipe under the
minimum limits plans as llvmpipe under them: pass the minimum trace as both), so only the fastest case
per op is kept. --within LOG: only the cases that log ran and passed (the traced runs, and a repeat
with its own gtest filter).
"""
import argparse
import re
import sys
from collections import defaultdict


def read_trace(path):
    """{test: [(op, program, groups)]} in the order the cases ran."""
    plans = {}
    current = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# "):
                current = line[2:]
                plans[current] = []
            elif current is not None and line:
                parts = line.split("\t")
                plans[current].append(tuple(parts + [""] * (3 - len(parts)))[:3])
    return plans


WG_SIZE = re.compile(r"\bWG_SIZE=\d+")


def normalized(plan):
    return [(op, WG_SIZE.sub("WG_SIZE=*", program)) for op, program, _groups in plan]


def read_times(path):
    """{test: milliseconds} from a gtest log."""
    times = {}
    pattern = re.compile(r"^\[\s+OK \] (\S+)(?:, where .*)? \((\d+) ms\)")
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = pattern.match(line)
            if m:
                times[m.group(1)] = int(m.group(2))
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--default", required=True, help="plan trace of the default run")
    ap.add_argument("--mode", required=True, help="plan trace of the run in the other mode")
    ap.add_argument("--log", required=True, help="gtest log of the run in the other mode (case durations)")
    ap.add_argument("--within", action="append", default=[],
                    help="a gtest log: only the cases it ran and passed are listed (repeatable: the traced runs' "
                         "logs, so that a case that failed in either is kept; the repeat as CI filters it)")
    ap.add_argument("--same-plan-as-default", action="store_true",
                    help="keep only the fastest case per op (the mode plans as the default trace does)")
    ap.add_argument("--out", required=True, help="the skip list to write")
    ap.add_argument("--title", default="", help="the list's first comment line")
    a = ap.parse_args()

    base, mode = read_trace(a.default), read_trace(a.mode)
    times = read_times(a.log)
    cases = list(mode)
    for log in a.within:
        ran = read_times(log)
        cases = [c for c in cases if c in ran]
    differs = set()
    if not a.same_plan_as_default:
        differs = {c for c in cases if c not in base or normalized(base[c]) != normalized(mode[c])}
    # every op the cases run: the fastest case of each among those kept, else added
    by_op = defaultdict(list)
    for c in cases:
        for op, _program, _groups in mode[c]:
            by_op[op].append(c)
    keep = set(differs)
    for op, with_op in sorted(by_op.items()):
        if not any(c in keep for c in with_op):
            keep.add(min(with_op, key=lambda c: (times.get(c, 10**9), c)))
    skip = [c for c in cases if c not in keep]
    kept_ms = sum(times.get(c, 0) for c in keep)
    skip_ms = sum(times.get(c, 0) for c in skip)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("# %s\n" % a.title if a.title else "")
        f.write("# Written by tools/plan-cases.py (docs/testing.md, \"CI time\"): %d cases skipped, %d kept (%d whose plan\n"
                "# differs, the others the fastest case of an op), %.0f s of %.0f s of the run's test time skipped.\n"
                % (len(skip), len(keep), len(differs), skip_ms / 1000, (kept_ms + skip_ms) / 1000))
        for c in skip:
            f.write(c + "\n")
    print("%s: %d cases, %d whose plan differs, %d kept, %d skipped (%.1f of %.1f test-s); %d ops"
          % (a.out, len(cases), len(differs), len(keep), len(skip), skip_ms / 1000, (kept_ms + skip_ms) / 1000, len(by_op)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
