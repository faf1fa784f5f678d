#!/usr/bin/python3
"""ONNX's backend node tests through the tensorgl runtime (the C API through the package tensorgl's binding, tensorgl._runtime).

Every case of onnx.backend.test.case.node.collect_testcases (python3-onnx 1.12: 924 cases) is
written to a temporary directory (model.onnx, inputs and expected outputs as .npy), loaded by the
runtime on each plugin and compared as ONNX's own runner compares (numpy.testing.assert_allclose
with the case's rtol/atol: 1e-3 / 1e-7; dtypes must match). Each case is one of
  pass         the outputs match
  fail         wrong outputs, a run-time error after a successful load, or a crash
  unsupported  the runtime refused the model at load (TGLRT_ERROR_UNSUPPORTED), with the reason
The cases run in a worker process per plugin; a crash fails that case and the worker restarts.

  node_tests.py --lib build/lib/libtensorgl_runtime.so [--plugins cpu,gles] [--ops nn|all|Op,Op]
                [--markdown docs/onnx-node-tests.md] [--fail-on-mismatch] [--graph]
  node_tests.py --export DIR [--ops ...]        write the cases to DIR (needs python3-onnx 1.12)
  node_tests.py --lib ... --cases DIR [...]     run cases written by --export (needs numpy only:
                                                for a machine without onnx 1.12, e.g. the GPU one)

--ops nn selects the neural-network op set of issue 17. Exit status: 0, or 1 with
--fail-on-mismatch when any case of the selection fails (unsupported cases do not count).
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

# onnx 1.12's generators use aliases that numpy 1.24 removed.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for _alias, _type in (("float", float), ("int", int), ("bool", bool), ("object", object)):
        if not hasattr(np, _alias):
            setattr(np, _alias, _type)

# The package's binding of the runtime (ctest puts <build>/python on PYTHONPATH).
from tensorgl._runtime import DTYPES, UNSUPPORTED, OnnxRuntimeError, Runtime  # noqa: E402

# The neural-network op set of issue 17 (section 2's target).
NN_OPS = [
    "Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool",
    "GlobalMaxPool", "LpPool", "BatchNormalization", "InstanceNormalization", "LayerNormalization",
    "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish",
    "Tanh", "Softplus", "Softsign", "Mish", "ThresholdedRelu", "Gelu", "Softmax", "LogSoftmax",
    "Hardmax", "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
    "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "CumSum",
    "TopK", "Gather", "GatherElements", "GatherND", "Scatter", "ScatterElements", "ScatterND",
    "Slice", "Concat", "Split", "Pad", "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
    "Expand", "Tile", "Resize", "Upsample", "Where", "Cast", "CastLike", "Equal", "Less",
    "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor", "Not", "Add", "Sub", "Mul",
    "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Abs", "Neg", "Exp", "Log", "Sqrt",
    "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos",
    "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Clip", "Einsum", "Trilu", "OneHot",
    "Range", "Dropout", "DepthToSpace", "SpaceToDepth", "LSTM", "GRU", "RNN", "Identity",
    "IsNaN", "IsInf", "Shape", "Size", "ConstantOfShape", "Constant",
]

# NP_OF: tglrt_dtype -> numpy dtype (bfloat16: ONNX's test data holds its bits as uint16).
NP_OF = {code: np_type for code, (np_type, _) in DTYPES.items()}


def run_case(rt, dev, case_dir, graph):
    """Returns (status, reason, fixed input names, whether it ran with f64_as_f32). A model the
    runtime refuses for its double tensors is loaded again with the f64_as_f32 option (double
    computed in f32), and the table counts those cases apart."""
    meta = json.load(open(os.path.join(case_dir, "case.json")))
    arrays = {n: np.load(os.path.join(case_dir, "in%d.npy" % i)) for i, n in enumerate(meta["inputs"])}
    path = os.path.join(case_dir, "model.onnx")
    f64 = False
    try:
        try:
            model, fixed = rt.load_fixing(dev, path, arrays, graph)
        except OnnxRuntimeError as e:
            if e.status != UNSUPPORTED or "f64_as_f32" not in e.message:
                raise
            f64 = True
            model, fixed = rt.load_fixing(dev, path, arrays, graph, f64_as_f32=True)
    except OnnxRuntimeError as e:
        msg = "%s: %s" % (e.status_name, e.message)
        return ("unsupported" if e.status == UNSUPPORTED else "fail"), msg, [], f64
    status, reason = compare(rt, model, meta, case_dir, arrays)
    return status, reason, fixed, f64


def compare(rt, model, meta, case_dir, arrays):
    try:
        ins, outs = rt.infos(model, True), rt.infos(model, False)
        in_bufs = [np.ascontiguousarray(arrays[ti.name.decode()]) for ti in ins]
        out_bufs = []
        for ti in outs:
            if ti.dtype not in NP_OF:
                return "fail", "output dtype %d" % ti.dtype
            out_bufs.append(np.empty([ti.shape[d] for d in range(ti.rank)], dtype=NP_OF[ti.dtype]))
        try:
            rt.run(model, in_bufs, out_bufs)
        except OnnxRuntimeError as e:
            return "fail", "run: %s: %s" % (e.status_name, e.message)
        by_name = {ti.name.decode(): a for ti, a in zip(outs, out_bufs)}
        for i, name in enumerate(meta["outputs"]):
            ref = np.load(os.path.join(case_dir, "out%d.npy" % i))
            got = by_name[name]
            if got.dtype != ref.dtype or got.shape != ref.shape:
                return "fail", "output %s: %s %s, expected %s %s" % (name, got.dtype, got.shape, ref.dtype, ref.shape)
            try:
                np.testing.assert_allclose(got, ref, rtol=meta["rtol"], atol=meta["atol"])
            except AssertionError as e:
                lines = [l.strip() for l in str(e).splitlines() if l.strip().startswith(("Mismatched", "Max abs", "Max rel"))]
                return "fail", "output %s: %s" % (name, "; ".join(lines))
        return "pass", ""
    finally:
        rt.lib.tglrt_model_free(model)


def worker(args):
    rt = Runtime(args.lib)
    dev = rt.open(args.worker)
    for line in sys.stdin:
        case_dir = line.strip()
        if not case_dir:
            continue
        try:
            status, reason, fixed, f64 = run_case(rt, dev, case_dir, args.graph)
        except Exception as e:  # a bug of this script or the binding: a failure of the case
            status, reason, fixed, f64 = "fail", "%s: %s" % (type(e).__name__, e), [], False
        print(json.dumps({"case": case_dir, "status": status, "reason": reason, "fixed": fixed, "f64": f64}), flush=True)
    return 0


def write_cases(selection, root):
    """Writes the selected cases; returns [(name, op_type, dir, why not runnable or None)]."""
    import onnx  # only here: running exported cases (--cases) needs numpy alone
    from onnx.backend.test.case import node
    cases = node.collect_testcases(None)
    op_of = {}
    for c in cases:
        if not c.name.endswith("_expanded") and c.model.graph.node:
            op_of[c.name] = c.model.graph.node[0].op_type
    out, seen = [], set()
    for c in cases:
        if c.name in seen:  # a few generators register a case twice
            continue
        seen.add(c.name)
        base = c.name[: -len("_expanded")] if c.name.endswith("_expanded") else c.name
        op = op_of.get(base, c.model.graph.node[0].op_type if c.model.graph.node else "?")
        if selection is not None and op not in selection:
            continue
        d = os.path.join(root, c.name)
        os.makedirs(d)
        onnx.save(c.model, os.path.join(d, "model.onnx"))
        inputs, outputs = c.data_sets[0]
        in_names = [vi.name for vi in c.model.graph.input]
        out_names = [vi.name for vi in c.model.graph.output]
        inputs = [np.asarray(a) if isinstance(a, np.generic) else a for a in inputs]
        outputs = [np.asarray(a) if isinstance(a, np.generic) else a for a in outputs]
        why = None  # why the case cannot run here, or None
        for a in list(inputs) + list(outputs):
            if not isinstance(a, np.ndarray) or a.dtype == object:
                why = "inputs or outputs are not numeric tensors (sequences, optionals or strings are not supported)"
        if why is None:
            # The runtime plans the shapes the model declares; a case whose data has other shapes
            # (onnx 1.12's castlike cases declare 'like' as (3, 4) and pass one element) cannot run.
            for vi, a in zip(c.model.graph.input, inputs):
                dims = [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
                if None not in dims and tuple(dims) != a.shape:
                    why = "the case's input '%s' has shape %s, its model declares %s (the runtime runs static shapes)" % (vi.name, a.shape, tuple(dims))
        if why is None:
            for i, a in enumerate(inputs):
                np.save(os.path.join(d, "in%d.npy" % i), a)
            for i, a in enumerate(outputs):
                np.save(os.path.join(d, "out%d.npy" % i), a)
        json.dump({"inputs": in_names, "outputs": out_names, "rtol": c.rtol, "atol": c.atol},
                  open(os.path.join(d, "case.json"), "w"))
        out.append((c.name, op, d, why))
    return out


INDEX = "cases.json"  # --export's list of the cases, with paths relative to its directory


def export_cases(selection, root):
    os.makedirs(root, exist_ok=True)
    if os.listdir(root):
        sys.exit("--export: '%s' is not empty" % root)
    cases = write_cases(selection, root)
    with open(os.path.join(root, INDEX), "w") as f:
        json.dump({"onnx": __import__("onnx").__version__,
                   "cases": [[n, op, os.path.relpath(d, root), why] for n, op, d, why in cases]}, f)
    return cases


def read_exported(selection, root):
    """The cases of an --export directory (the selection applied again)."""
    with open(os.path.join(root, INDEX)) as f:
        index = json.load(f)
    return [(n, op, os.path.join(root, d), why) for n, op, d, why in index["cases"]
            if selection is None or op in selection]


def run_plugin(args, plugin, cases):
    """Runs every case on one plugin in worker processes; returns {case name: (status, reason)}."""
    results = {}
    todo = [c for c in cases if c[3] is None]
    for name, _, _, why in cases:
        if why is not None:
            results[name] = ("unsupported", why, [], False)
    i = 0
    while i < len(todo):
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--lib", args.lib, "--worker", plugin]
                             + (["--graph"] if args.graph else []),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        p.stdin.write("".join(c[2] + "\n" for c in todo[i:]))
        p.stdin.close()
        for line in p.stdout:
            r = json.loads(line)
            results[todo[i][0]] = (r["status"], r["reason"], r["fixed"], r["f64"])
            i += 1
        rc = p.wait()
        err = p.stderr.read()
        if i < len(todo):  # the worker died on todo[i]
            why = "crashed (exit status %d)" % rc if rc else "worker stopped"
            tail = err.strip().splitlines()[-1:] if err.strip() else []
            results[todo[i][0]] = ("fail", why + (": " + tail[0] if tail else ""), [], False)
            i += 1
    return results


# What blocks an unsupported case, from its reason: (pattern, blocker name from the match, kind).
# The first match wins; a reason no pattern matches is listed as itself (kind "other"), so the
# table never hides one.
BLOCKERS = [
    (r"dtype double|cast to double", lambda m: "f64 (no double dtype)", "dtype to add"),
    (r"dtype (u?int16|uint32|uint64)", lambda m: "int16/uint16/uint32/uint64 dtypes", "dtype to add"),
    (r"on (u?int16|uint32|uint64): the device holds that type in int32",
     lambda m: "arithmetic on int16/uint16/uint32/uint64 (held in int32)", "dtype to add"),
    (r"the plugin's (\w+) does not take (int32|int64|u?int16|uint32|uint64)\b", lambda m: "%s on i32 (integer arithmetic)" % m.group(1), "ABI op to extend"),
    (r"the ABI has no (\w+) op", lambda m: m.group(1), "ABI op to add"),
    (r"ConvTranspose of 3 spatial dims", lambda m: "conv_transpose3d", "ABI op to add"),
    (r"reduction 'mul'", lambda m: "scatter with a multiplying reduction", "ABI op to add"),
    (r"not numeric tensors", lambda m: "strings, sequences, optionals", "not runnable by design"),
    (r"random dropout", lambda m: "random Dropout (training, ratio > 0)", "not runnable by design"),
    (r"op type (Loop|If|Scan) ", lambda m: "control flow (%s)" % m.group(1), "not runnable by design"),
    (r"domain 'ai\.onnx\.preview\.training'", lambda m: "training ops (ai.onnx.preview.training)", "not runnable by design"),
    (r"op type (\w+) is not supported by the runtime", lambda m: m.group(1), "op type not lowered"),
    (r"its model declares", lambda m: "the case's data contradicts its model's shapes", "test data"),
]


def blocker_of(reason):
    for pattern, name, kind in BLOCKERS:
        m = re.search(pattern, reason)
        if m:
            return name(m), kind
    return reason, "other"


def blocker_table(cases, plugins, results):
    """Markdown: every blocker of the unsupported cases, its kind, and the cases per op type."""
    rows = collections.OrderedDict()
    for name, op, _, _ in sorted(cases, key=lambda c: (c[1], c[0])):
        for p in plugins:
            st, why = results[p][name][:2]
            if st == "unsupported":
                key = blocker_of(why)
                rows.setdefault(key, collections.OrderedDict()).setdefault(op, collections.defaultdict(set))[p].add(name)
    lines = ["| missing | kind | cases | op types (cases; per plugin where the plugins differ) |",
             "|---|---|---|---|"]
    cases_of = lambda ops: sum(len(set.union(*by_p.values())) for by_p in ops.values())
    for (blocker, kind), ops in sorted(rows.items(), key=lambda kv: (kv[0][1], -cases_of(kv[1]), kv[0][0])):
        cells = []
        for op, by_p in ops.items():
            counts = [len(by_p.get(p, ())) for p in plugins]
            cells.append("%s %d" % (op, counts[0]) if len(set(counts)) == 1 else
                         "%s %s" % (op, "/".join("%s %d" % (p, c) for p, c in zip(plugins, counts))))
        lines.append("| %s | %s | %d | %s |" % (blocker.replace("|", "\\|"), kind, cases_of(ops), ", ".join(cells)))
    return lines


def markdown(cases, plugins, results, selection_label, seconds, note=""):
    by_op = collections.OrderedDict()
    for name, op, _, _ in sorted(cases, key=lambda c: (c[1], c[0])):
        by_op.setdefault(op, []).append(name)
    lines = ["# ONNX node tests on tensorgl", "",
             "Generated by `runtime/tools/node_tests.py` (do not edit by hand): every case of python3-onnx "
             "1.12's `onnx.backend.test.case.node.collect_testcases` (%s), run through the runtime's C API "
             "and compared with ONNX's tolerances (`assert_allclose`, rtol 1e-3, atol 1e-7, dtypes equal). "
             "**unsupported**: refused at load with the reason; **fail**: wrong outputs, a run-time error "
             "or a crash. Run time %.0f s.%s" % (selection_label, seconds, " " + note if note else ""), ""]
    totals = {p: collections.Counter(results[p][n][0] for n, _, _, _ in cases) for p in plugins}
    lines.append("| plugin | cases | pass | fail | unsupported |")
    lines.append("|---|---|---|---|---|")
    for p in plugins:
        t = totals[p]
        lines.append("| %s | %d | %d | %d | %d |" % (p, len(cases), t["pass"], t["fail"], t["unsupported"]))
    f64_cases = [n for n, _, _, _ in cases if any(results[p][n][3] for p in plugins)]
    if f64_cases:
        lines += ["", "*f64*: %d cases hold double tensors, which the ABI lacks; they ran with the runtime's "
                  "`f64_as_f32` load option (double computed in f32, at f32's precision: docs/runtime.md), and "
                  "count as pass only when their outputs meet ONNX's tolerances that way." % len(f64_cases)]
    lines += ["", "*fixed*: cases whose shape parameters (inputs such as Reshape's shape, Slice's starts, TopK's k) "
              "the runtime needs at load were loaded with those inputs bound to the case's values "
              "(`tglrt_load_options.fixed_inputs`): the runtime plans static shapes."]
    nn_cases = [c for c in cases if c[1] in NN_OPS]
    if len(nn_cases) != len(cases):  # the target set within the table: its own totals and blockers
        lines += ["", "The neural-network op set of issue 17 (`--ops nn`):", "",
                  "| plugin | cases | pass | fail | unsupported |", "|---|---|---|---|---|"]
        for p in plugins:
            t = collections.Counter(results[p][n][0] for n, _, _, _ in nn_cases)
            lines.append("| %s | %d | %d | %d | %d |" % (p, len(nn_cases), t["pass"], t["fail"], t["unsupported"]))
        lines += ["", "What blocks its unsupported cases (from their reasons; the \"ABI op\" and \"dtype\" rows are "
                  "what the plugins would need):", ""] + blocker_table(nn_cases, plugins, results)
    lines += ["", "What blocks the unsupported cases%s (from their reasons):" % (" of all op types" if len(nn_cases) != len(cases) else ""),
              ""] + blocker_table(cases, plugins, results) + [""]
    lines += ["| op type | cases | " + " | ".join("%s pass / fail / unsup." % p for p in plugins) + " | fixed | f64 | reasons (first of each kind) |",
              "|---|---|" + "---|" * len(plugins) + "---|---|---|"]
    for op, names in by_op.items():
        cells, reasons = [], []
        for p in plugins:
            c = collections.Counter(results[p][n][0] for n in names)
            cells.append("%d / %d / %d" % (c["pass"], c["fail"], c["unsupported"]))
            for n in names:
                st, why = results[p][n][:2]
                if st != "pass":
                    short = why.replace("|", "\\|").replace("\n", " ")
                    if len(short) > 220:
                        short = short[:217] + "..."
                    entry = "%s %s (`%s`): %s" % (p, st, n, short)
                    if not any(r.startswith("%s %s" % (p, st)) for r in reasons):
                        reasons.append(entry)
        nfixed = sum(1 for n in names if results[plugins[0]][n][2])
        nf64 = sum(1 for n in names if any(results[p][n][3] for p in plugins))
        lines.append("| %s | %d | %s | %d | %d | %s |" % (op, len(names), " | ".join(cells), nfixed, nf64, "<br>".join(reasons)))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", help="path of libtensorgl_runtime.so (required, except with --export)")
    ap.add_argument("--note", default="", help="a sentence added to the table's header (the machine it ran on)")
    ap.add_argument("--plugins", default="cpu,gles")
    ap.add_argument("--ops", default="all", help="nn, all, or a comma-separated list of op types")
    ap.add_argument("--markdown", help="write the table to this file")
    ap.add_argument("--fail-on-mismatch", action="store_true")
    ap.add_argument("--graph", action="store_true", help="record each model as an ABI 1.2 graph and replay it")
    ap.add_argument("--export", metavar="DIR", help="write the selected cases to DIR and stop")
    ap.add_argument("--cases", metavar="DIR", help="run the cases an earlier --export wrote to DIR")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    selection = None if args.ops == "all" else set(NN_OPS) if args.ops == "nn" else set(args.ops.split(","))
    if args.export:
        print("%d cases written to %s" % (len(export_cases(selection, args.export)), args.export))
        return 0
    if not args.lib or not os.path.isfile(args.lib):
        ap.error("--lib: no such file '%s'" % args.lib)
    label = "all op types" if selection is None else ("the neural-network op set of issue 17" if args.ops == "nn" else args.ops)
    plugins = [p for p in args.plugins.split(",") if p]
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="tgl-node-tests-") as root:
        cases = read_exported(selection, args.cases) if args.cases else write_cases(selection, root)
        if not cases:
            ap.error("--ops %s selects no case" % args.ops)
        results = {p: run_plugin(args, p, cases) for p in plugins}
    seconds = time.time() - t0
    for p in plugins:
        c = collections.Counter(r[0] for r in results[p].values())
        print("%-6s %d cases: %d pass, %d fail, %d unsupported" % (p, len(cases), c["pass"], c["fail"], c["unsupported"]))
        for name, _, _, _ in cases:
            st, why = results[p][name][:2]
            if st == "fail":
                print("  FAIL %s: %s" % (name, why[:300]))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(cases, plugins, results, label, seconds, args.note))
        print("table written to", args.markdown)
    print("%.1f s" % seconds)
    failed = any(r[0] == "fail" for p in plugins for r in results[p].values())
    return 1 if (failed and args.fail_on_mismatch) else 0


if __name__ == "__main__":
    sys.exit(main())
