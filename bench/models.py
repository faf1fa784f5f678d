#!/usr/bin/env python3
"""Model-level speed: the networks of samples/models on a tensorgl plugin beside PyTorch eager on
the same GPU, in one command (issue 17 section 4).

    python3 bench/models.py --build build-gpu --out $OUT                 # the GPU machine, full sizes
    python3 bench/models.py --build build --size small --torch-device cpu --plugin gles   # a smoke test

Rows: ResNet-50 batch 1 and 32 (images/s), ViT-B/16 batch 8 (images/s), the GPT-2-style decoder's
512-token prefill (tokens/s) and greedy decode (ms/token, 32 tokens, KV cache). Each model is
exported here with this machine's torch (samples/models/models.py, random weights of a fixed
seed), loaded once into tensorgl.onnx.InferenceSession (op by op, and with --graph also recorded as
an ABI 1.2 graph and replayed), and the same torch module runs in eager mode on --torch-device
(TF32 off). Both sides are timed host to host: numpy inputs in, numpy outputs out (tensorgl's run()
includes the upload and download; the torch side copies the inputs to the device and the outputs
back, and synchronizes). The torch side is also timed with inputs and outputs resident on the
device (its "kernels only" figure). Warm-up repeats a batch of runs until two successive batch
medians agree within 3% (at most --max-warmup seconds); then the median of --runs runs is taken.
Outputs are compared with torch's on the same device (max abs diff, relative to max|torch|).

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


def gpt2_decode_loop(step, first, P, new, kc, vc):
    """Greedy decode of new-1 tokens after the prefill's first; step(token, pos, kc, vc) ->
    (logits, next, kc, vc). Returns the tokens."""
    tok, toks = first, [first]
    for i in range(1, new):
        _, tok, kc, vc = step(tok, P + i - 1, kc, vc)
        toks.append(tok)
    return toks


def bench_row(row, net, batch, what, unit, a, tdev, work, log):
    """One row: {'tensorgl': value, 'torch': value, 'torch_resident': value, ...} (in `unit`)."""
    from tensorgl.onnx import InferenceSession
    torch = tdev.torch
    d = os.path.join(work, "%s_b%d" % (net, batch))
    b = models.build(net, a.size, batch, seed=0)
    if not os.path.exists(os.path.join(d, "meta.json")):  # the prefill and decode rows share one export
        t0 = time.perf_counter()
        models.export(net, d, size=a.size, batch=batch, seed=0, reference=False, built=b)
        log("  exported %s batch %d in %.1f s (torch.onnx, opset 17)" % (net, batch, time.perf_counter() - t0))
    res = {"row": row, "unit": unit, "batch": batch}
    with torch.no_grad():
        if net != "gpt2":
            mod = b["model"].to(tdev.device)
            x = [t.numpy() for t in b["inputs"].values()]
            model_path = os.path.join(d, "model.onnx")
            feeds = dict(zip(b["inputs"], x))
            t_load = time.perf_counter()
            sess = InferenceSession(model_path, plugin=a.plugin, record_graph=a.graph)
            res["load_s"] = time.perf_counter() - t_load
            ours = lambda: sess.run(None, feeds)
            theirs = tdev.host_to_host(mod, x)
            got, want = ours(), theirs()
            res["max_abs_diff"], res["rel_diff"] = models.max_diff(got[0], want[0])
            t_ours = timed(ours, a.runs, a.max_warmup)
            t_torch = timed(theirs, a.runs, a.max_warmup)
            t_res = timed(tdev.resident(mod, x), a.runs, a.max_warmup)
            per = lambda t: batch / t
            res.update(tensorgl=per(t_ours), torch=per(t_torch), torch_resident=per(t_res))
            res["profile_args"] = [model_path] + sum((["--input", "%s=%s" % (n, os.path.join(d, "input_%s.npy" % n))] for n in feeds), [])
            sess.close()
        else:
            cfg = b["cfg"]
            P, new = cfg["prompt"], cfg["new"]
            ids = b["ids"].numpy()
            t_load = time.perf_counter()
            pre = InferenceSession(os.path.join(d, "prefill.onnx"), plugin=a.plugin, record_graph=a.graph)
            dec = InferenceSession(os.path.join(d, "decode.onnx"), plugin=a.plugin, record_graph=a.graph)
            res["load_s"] = time.perf_counter() - t_load
            prefill_t = b["prefill"].to(tdev.device)
            decode_t = b["decode"].to(tdev.device)
            if what == "prefill":
                ours = lambda: pre.run(None, {"ids": ids})
                theirs = tdev.host_to_host(prefill_t, [ids])
                got, want = ours(), theirs()
                res["max_abs_diff"], res["rel_diff"] = models.max_diff(got[0], want[0])
                t_ours = timed(ours, a.runs, a.max_warmup)
                t_torch = timed(theirs, a.runs, a.max_warmup)
                t_res = timed(tdev.resident(prefill_t, [ids]), a.runs, a.max_warmup)
                res.update(tensorgl=P / t_ours, torch=P / t_torch, torch_resident=P / t_res)
                res["profile_args"] = [os.path.join(d, "prefill.onnx"), "--input", "ids=%s" % os.path.join(d, "input_ids.npy")]
            else:
                _, first, kc, vc = pre.run(None, {"ids": ids})

                def ours():
                    return gpt2_decode_loop(lambda t, p, k, v: dec.run(None, models.gpt2_decode_inputs(t, p, k, v)),
                                            first, P, new, kc, vc)

                # torch: the same decode module with its cache resident on the device (eager).
                ids_d = torch.from_numpy(ids).to(tdev.device)
                _, first_t, kc_t, vc_t = prefill_t(ids_d)

                def theirs():
                    toks = gpt2_decode_loop(
                        lambda t, p, k, v: decode_t(t.reshape(-1, 1), torch.tensor([p], device=tdev.device), k, v),
                        first_t, P, new, kc_t, vc_t)
                    return [int(t[0]) for t in toks]

                got = [int(t[0]) for t in ours()]
                want = theirs()
                res["tokens_equal"] = "%d/%d" % (sum(g == w for g, w in zip(got, want)), len(got))
                steps = new - 1
                t_ours = timed(ours, max(3, a.runs // 4), a.max_warmup)
                t_torch = timed(theirs, max(3, a.runs // 4), a.max_warmup)
                res.update(tensorgl=1e3 * t_ours / steps, torch=1e3 * t_torch / steps, torch_resident=None)
                res["profile_args"] = [os.path.join(d, "decode.onnx")] + sum(
                    (["--input", "%s=%s" % (k, os.path.join(d, "decode_input_%s.npy" % k))] for k in ("token", "pos", "k_cache", "v_cache")), [])
            pre.close()
            dec.close()
    # Ratio: how many times torch's speed (for ms/token: torch's time over ours).
    res["ratio"] = res["torch"] / res["tensorgl"] if unit == "ms/token" else res["tensorgl"] / res["torch"]
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
    ap.add_argument("--graph", action="store_true", help="record each model as an ABI 1.2 graph and replay it")
    ap.add_argument("--work", default=None, help="where the exported models go (default: a temporary folder)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    a = ap.parse_args(argv)
    build = os.path.abspath(a.build)
    os.environ.setdefault("TENSORGL_LIB", os.path.join(build, "lib", "libtensorgl.so"))
    sys.path.insert(0, os.path.join(build, "python"))
    tdev = Torch(a.torch_device)
    work = a.work or tempfile.mkdtemp(prefix="tgl-models-")
    os.makedirs(a.out, exist_ok=True)
    log = lambda s: print(s, flush=True)
    tv = __import__("torch").__version__
    gpu = tdev.torch.cuda.get_device_name(0) if tdev.device.type == "cuda" else "cpu"
    log("tensorgl %s%s vs torch %s eager on %s (%s), TF32 off, sizes %s" % (
        a.plugin, " (graph replay)" if a.graph else "", tv, a.torch_device, gpu, a.size))
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
            log("  tensorgl %s  torch %s (resident %s) %s  ratio %.3f  load %.1f s  diff %s" % (
                fmt(r["tensorgl"], unit), fmt(r["torch"], unit), fmt(r["torch_resident"], unit), unit,
                r["ratio"], r["load_s"], r.get("tokens_equal") or "%.3g (%.3g rel)" % (r["max_abs_diff"], r["rel_diff"])))
        results.append(r)
    lines = ["| row | unit | tensorgl %s%s | torch eager %s (host to host) | torch (resident) | tensorgl / torch | check |" % (
                 a.plugin, " graph" if a.graph else "", a.torch_device),
             "|---|---|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            lines.append("| %s | %s | failed: %s | | | | |" % (r["row"], r["unit"], r["error"].replace("|", "/")[:200]))
            continue
        check = ("tokens %s" % r["tokens_equal"]) if "tokens_equal" in r else "max diff %.2g of max" % r["rel_diff"]
        lines.append("| %s | %s | %s | %s | %s | %.3f | %s |" % (
            r["row"], r["unit"], fmt(r["tensorgl"], r["unit"]), fmt(r["torch"], r["unit"]),
            fmt(r["torch_resident"], r["unit"]), r["ratio"], check))
    table = "\n".join(lines)
    log("\n" + table)
    with open(os.path.join(a.out, "models.md"), "w") as f:
        f.write("tensorgl %s vs torch %s eager on %s (%s); %s\n\n%s\n" % (a.plugin, tv, a.torch_device, gpu, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), table))
    with open(os.path.join(a.out, "models.json"), "w") as f:
        json.dump({"torch": tv, "device": gpu, "plugin": a.plugin, "graph": a.graph, "size": a.size, "rows": results}, f, indent=1)
    # The per-node profile of the model furthest behind torch.
    ok = [r for r in results if "error" not in r]
    if ok:
        worst = min(ok, key=lambda r: r["ratio"])
        cmd = [os.path.join(build, "bin", "tensorgl-run"), *worst["profile_args"], "--plugin=" + a.plugin, "--profile", "--repeat=3"]
        log("profile of %s (lowest ratio): %s" % (worst["row"], " ".join(cmd)))
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        with open(os.path.join(a.out, "profile.txt"), "w") as f:
            f.write("%s (ratio %.3f)\n$ %s\n%s%s" % (worst["row"], worst["ratio"], " ".join(cmd), p.stdout, p.stderr))
        log("\n".join(p.stdout.splitlines()[:40]))
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
