#!/usr/bin/env python3
"""Model-level speed: the networks of samples/models on a tensorgl plugin beside PyTorch eager on
the same GPU, in one command (issue 17 section 4).

    python3 bench/models.py --build build-gpu --out $OUT                 # the GPU machine, full sizes
    python3 bench/models.py --build build --size small --torch-device cpu --plugin gles   # a smoke test

Rows: ResNet-50 batch 1 and 32 (images/s), ViT-B/16 batch 8 (images/s), the GPT-2-style decoder's
512-token prefill (tokens/s) and greedy decode (ms/token, 32 tokens, KV cache). Each model is
exported here with this machine's torch (samples/models/models.py, random weights of a fixed
seed), loaded into tensorgl.onnx.InferenceSession in each of --modes (op: ops issued one by one;
graph: the plan recorded once as an ABI 1.2 graph and replayed), and the same torch module runs in
eager mode on --torch-device (TF32 off). The decode keeps its KV cache on the device on both sides
(tensorgl: InferenceSession(carry=...)); each token goes back to the host (greedy). Both sides are timed host to host: numpy inputs in, numpy outputs out (tensorgl's run()
includes the upload and download; the torch side copies the inputs to the device and the outputs
back, and synchronizes). The torch side is also timed with inputs and outputs resident on the
device (its "kernels only" figure). Warm-up repeats a batch of runs until two successive batch
medians agree within 3% (at most --max-warmup seconds); then the median of --runs runs is taken.
Outputs are compared with torch's on the same device (max abs diff relative to max|torch|; decode:
tokens equal to torch's, informative only: random weights make near-ties).

Writes OUT/models.md (the table, with ratios tensorgl/torch), OUT/models.json and
OUT/profile.txt: `tensorgl-run --profile` of the model with the lowest ratio.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "samples", "models"))
import models  # noqa: E402

# (row, net, batch, what is timed, unit)
ROWS = [
    ("resnet50_b1", "resnet50", 1, "forward", "images/s"),
    ("resnet50_b32", "resnet50", 32, "forward", "images/s"),
    ("vit_b_16_b8", "vit_b_16", 8, "forward", "images/s"),
    ("gpt2_prefill", "gpt2", 1, "prefill", "tokens/s"),
    ("gpt2_decode", "gpt2", 1, "decode", "ms/token"),
]


def settle(fn, max_warmup, batch=3, tolerance=0.03):
    """Runs fn in batches until two successive batch medians agree within `tolerance`."""
    t_end, prev = time.perf_counter() + max_warmup, None
    while True:
        ts = []
        for _ in range(batch):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        med = statistics.median(ts)
        if prev is not None and abs(med - prev) <= tolerance * prev or time.perf_counter() > t_end:
            return
        prev = med


def timed(fn, runs, max_warmup):
    settle(fn, max_warmup)
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


class Torch:
    """The torch side on one device, TF32 off."""

    def __init__(self, device):
        import torch
        self.torch, self.device = torch, torch.device(device)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")  # the same, in torch 2's words

    def sync(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize()

    def host_to_host(self, fn, np_inputs):
        """A callable: numpy in, module on the device, numpy out."""
        def run():
            ins = [self.torch.from_numpy(a).to(self.device) for a in np_inputs]
            outs = fn(*ins)
            outs = outs if isinstance(outs, (tuple, list)) else (outs,)
            return [o.cpu().numpy() for o in outs]
        return run

    def resident(self, fn, np_inputs):
        ins = [self.torch.from_numpy(a).to(self.device) for a in np_inputs]

        def run():
            fn(*ins)
            self.sync()
        return run


def bench_row(row, net, batch, what, unit, a, tdev, work, log):
    """One row: tensorgl in each of a.modes ("op": ops issued one by one, "graph": an ABI 1.2 graph
    replayed) and torch eager, host to host and resident. Values in `unit`."""
    from tensorgl.onnx import InferenceSession
    torch = tdev.torch
    d = os.path.join(work, "%s_b%d" % (net, batch))
    b = models.build(net, a.size, batch, seed=0)
    if not os.path.exists(os.path.join(d, "meta.json")):  # the prefill and decode rows share one export
        t0 = time.perf_counter()
        models.export(net, d, size=a.size, batch=batch, seed=0, reference=False, built=b)
        log("  exported %s batch %d in %.1f s (torch.onnx, opset 17)" % (net, batch, time.perf_counter() - t0))
    res = {"row": row, "unit": unit, "batch": batch}
    rate = (lambda t: 1e3 * t / steps) if unit == "ms/token" else (lambda t: work_units / t)
    sessions = []

    def session(name, graph, **kw):
        t0 = time.perf_counter()
        s = InferenceSession(os.path.join(d, name), plugin=a.plugin, record_graph=graph, **kw)
        res.setdefault("load_s", {})
        res["load_s"][name + (" graph" if graph else "")] = round(time.perf_counter() - t0, 2)
        sessions.append(s)
        return s

    with torch.no_grad():
        if net != "gpt2":
            work_units = batch
            mod = b["model"].to(tdev.device)
            x = [t.numpy() for t in b["inputs"].values()]
            feeds = dict(zip(b["inputs"], x))
            make_ours = lambda graph: (lambda s: (lambda: s.run(None, feeds)))(session("model.onnx", graph))
            theirs = tdev.host_to_host(mod, x)
            resident = tdev.resident(mod, x)
            res["profile_args"] = [os.path.join(d, "model.onnx")] + sum(
                (["--input", "%s=%s" % (n, os.path.join(d, "input_%s.npy" % n))] for n in feeds), [])
        else:
            cfg = b["cfg"]
            P, new = cfg["prompt"], cfg["new"]
            ids = b["ids"].numpy()
            prefill_t, decode_t = b["prefill"].to(tdev.device), b["decode"].to(tdev.device)
            if what == "prefill":
                work_units = P
                make_ours = lambda graph: (lambda s: (lambda: s.run(None, {"ids": ids})))(session("prefill.onnx", graph))
                theirs = tdev.host_to_host(prefill_t, [ids])
                resident = tdev.resident(prefill_t, [ids])
                res["profile_args"] = [os.path.join(d, "prefill.onnx"), "--input", "ids=%s" % os.path.join(d, "input_ids.npy")]
            else:
                steps = new - 1
                with InferenceSession(os.path.join(d, "prefill.onnx"), plugin=a.plugin) as pre:
                    _, first, kc, vc = pre.run(None, {"ids": ids})

                # One timed pass: new-1 greedy decode steps; the first uploads the prefill's cache,
                # the rest keep it on the device (carry). Returns the tokens.
                def make_ours(graph):
                    dec = session("decode.onnx", graph, carry=models.GPT2_DECODE_CARRY)
                    return lambda: [int(t[0]) for t in models.gpt2_decode(dec, first, P, new, kc, vc)[0]]

                # torch: the same decode module, eager, its cache resident on the device.
                _, first_t, kc_t, vc_t = prefill_t(torch.from_numpy(ids).to(tdev.device))

                def theirs():
                    tok, toks, k, v = first_t, [], kc_t, vc_t
                    for i in range(1, new):
                        _, tok, k, v = decode_t(tok.reshape(-1, 1), torch.tensor([P + i - 1], device=tdev.device), k, v)
                        toks.append(int(tok[0]))  # greedy: the host needs each token (a sync per step)
                    return toks
                resident = None
                res["first_token_equal"] = int(first[0]) == int(first_t[0])
                res["profile_args"] = [os.path.join(d, "decode.onnx")] + sum(
                    (["--input", "%s=%s" % (k, os.path.join(d, "decode_input_%s.npy" % k))] for k in ("token", "pos", "k_cache", "v_cache")), [])
        want = theirs()
        runs = a.runs if what != "decode" else max(3, a.runs // 4)
        res["torch"] = rate(timed(theirs, runs, a.max_warmup))
        res["torch_resident"] = rate(timed(resident, runs, a.max_warmup)) if resident else None
        for mode in a.modes:
            ours = make_ours(mode == "graph")
            got = ours()
            if what == "decode":
                res["check_" + mode] = "tokens %d/%d" % (sum(g == w for g, w in zip(got, want)), len(want))
            else:
                res["check_" + mode] = "max diff %.2g of max" % models.max_diff(got[0], want[0])[1]
            res[mode] = rate(timed(ours, runs, a.max_warmup))
            for s in sessions:
                s.close()
            sessions.clear()
    # Ratio: how many times torch's speed (for ms/token: torch's time over ours).
    for mode in a.modes:
        res["ratio_" + mode] = res["torch"] / res[mode] if unit == "ms/token" else res[mode] / res["torch"]
    res["ratio"] = max(res["ratio_" + m] for m in a.modes)
    return res


def fmt(v, unit):
    if v is None:
        return "-"
    return ("%.2f" % v) if unit == "ms/token" else ("%.1f" % v if v < 1000 else "%.0f" % v)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build-gpu", help="the build folder (lib/, bin/, python/)")
    ap.add_argument("--plugin", default="gles")
    ap.add_argument("--torch-device", default="cuda")
    ap.add_argument("--size", default="full", choices=("full", "small"))
    ap.add_argument("--rows", default=",".join(r[0] for r in ROWS), help="comma-separated rows")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per side after warm-up")
    ap.add_argument("--max-warmup", type=float, default=10.0, help="seconds of warm-up at most per side")
    ap.add_argument("--modes", default="op,graph", help="tensorgl modes: op (ops issued one by one), graph (ABI 1.2 graph replay)")
    ap.add_argument("--work", default=None, help="where the exported models go (default: a temporary folder)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    a = ap.parse_args(argv)
    a.modes = [m for m in a.modes.split(",") if m]
    if not a.modes or set(a.modes) - {"op", "graph"}:
        ap.error("--modes: expected op and/or graph, got %r" % ",".join(a.modes))
    build = os.path.abspath(a.build)
    os.environ.setdefault("TENSORGL_LIB", os.path.join(build, "lib", "libtensorgl.so"))
    sys.path.insert(0, os.path.join(build, "python"))
    tdev = Torch(a.torch_device)
    work = a.work or tempfile.mkdtemp(prefix="tgl-models-")
    os.makedirs(a.out, exist_ok=True)
    log = lambda s: print(s, flush=True)
    tv = __import__("torch").__version__
    gpu = tdev.torch.cuda.get_device_name(0) if tdev.device.type == "cuda" else "cpu"
    log("tensorgl %s (%s) vs torch %s eager on %s (%s), TF32 off, sizes %s" % (
        a.plugin, ", ".join(a.modes), tv, a.torch_device, gpu, a.size))
    results = []
    wanted = a.rows.split(",")
    for row, net, batch, what, unit in ROWS:
        if row not in wanted:
            continue
        log("%s ..." % row)
        try:
            r = bench_row(row, net, batch, what, unit, a, tdev, work, log)
        except Exception as e:  # one failing row must not lose the others
            r = {"row": row, "unit": unit, "error": "%s: %s" % (type(e).__name__, e)}
            log("  FAILED: %s" % r["error"])
        else:
            log("  " + "  ".join("tensorgl %s %s (ratio %.3f, %s)" % (m, fmt(r[m], unit), r["ratio_" + m], r["check_" + m]) for m in a.modes) +
                "  torch %s (resident %s) %s  load %s" % (fmt(r["torch"], unit), fmt(r["torch_resident"], unit), unit, r["load_s"]))
        results.append(r)
    head = " | ".join("tensorgl %s%s" % (a.plugin, " graph" if m == "graph" else "") for m in a.modes)
    lines = ["| row | unit | %s | torch eager (host to host) | torch (resident) | %s | check |" % (
                 head, " | ".join("ratio %s" % m for m in a.modes)),
             "|---|---|%s---|---|%s---|" % ("---|" * len(a.modes), "---|" * len(a.modes))]
    for r in results:
        if "error" in r:
            lines.append("| %s | %s | failed: %s |" % (r["row"], r["unit"], r["error"].replace("|", "/")[:300]))
            continue
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["row"], r["unit"], " | ".join(fmt(r[m], r["unit"]) for m in a.modes), fmt(r["torch"], r["unit"]),
            fmt(r["torch_resident"], r["unit"]), " | ".join("%.3f" % r["ratio_" + m] for m in a.modes),
            "; ".join(r["check_" + m] for m in a.modes)))
    table = "\n".join(lines)
    log("\n" + table)
    with open(os.path.join(a.out, "models.md"), "w") as f:
        f.write("tensorgl %s vs torch %s eager on %s (%s), TF32 off; %s. Ratio: tensorgl / torch host to host "
                "(ms/token: torch's time / ours); higher is better.\n\n%s\n" % (
                    a.plugin, tv, a.torch_device, gpu, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), table))
    with open(os.path.join(a.out, "models.json"), "w") as f:
        json.dump({"torch": tv, "device": gpu, "plugin": a.plugin, "modes": a.modes, "size": a.size, "rows": results}, f, indent=1)
    # The per-node profile of the model furthest behind torch.
    ok = [r for r in results if "error" not in r]
    if ok:
        worst = min(ok, key=lambda r: r["ratio"])  # the best mode's ratio
        cmd = [os.path.join(build, "bin", "tensorgl-run"), *worst["profile_args"], "--plugin=" + a.plugin, "--profile", "--repeat=3"]
        log("profile of %s (lowest ratio): %s" % (worst["row"], " ".join(cmd)))
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        with open(os.path.join(a.out, "profile.txt"), "w") as f:
            f.write("%s (ratio %.3f)\n$ %s\n%s%s" % (worst["row"], worst["ratio"], " ".join(cmd), p.stdout, p.stderr))
        log("\n".join(p.stdout.splitlines()[:40]))
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
