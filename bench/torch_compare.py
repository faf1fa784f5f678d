#!/usr/bin/env python3
"""PyTorch (CUDA) side of the tensorgl benchmark: the same cases, the same JSON schema
("tensorgl-bench/1", see bench/report.h), and the ratio table ours/torch.

    # run the rows of a tensorgl-bench result file in PyTorch on the same GPU, print the ratios:
    python3 bench/torch_compare.py --ours=gles.json --json=torch.json --markdown=ratios.md
    # or the built-in suites (the same table as tensorgl-bench), without a file of ours:
    python3 bench/torch_compare.py [--suite=matmul,binary] [--quick] --json=torch.json
    # ratios only, from two files (no GPU needed):
    python3 bench/torch_compare.py --ours=gles.json --torch=torch.json --markdown=ratios.md

Timing: CUDA events around `batch` runs queued back to back (batch calibrated so that a sample
takes ~20 ms), median of samples until MAD/median < 2% or the time per case runs out. f32 matmul
runs with TF32 off (torch.backends.cuda.matmul.allow_tf32 = False, cudnn.allow_tf32 = False).
Latency rows: "chain" = dependent in-place adds (eager, CUDA events, us/op); "graph" = the same adds
captured once in a CUDA graph (torch.cuda.CUDAGraph) and replayed (CUDA events, us/op); "sync" = one add and
torch.cuda.synchronize() per run (wall clock); first_op = a child `python3` from spawn to the
first matmul result on the host (import torch and CUDA start-up included).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

SCHEMA = "tensorgl-bench/1"

# The suite table of bench/cases.cpp: (suite, op, variant, full dims, quick dims, batch full,
# batch quick, label[, fixed dtype]). Keep the two in step (rows are matched by key).
SDPA = "attention"
N, n = 67108864, 262144
SUITES = [
    ("copy", "buffer_copy", "", [N], [n], 0, 0, ""),
    ("fill", "buffer_fill", "", [N], [n], 0, 0, ""),
    ("unary", "relu", "", [N], [n], 0, 0, ""),
    ("unary", "exp", "", [N], [n], 0, 0, ""),
    ("unary", "gelu", "", [N], [n], 0, 0, ""),
    ("binary", "add", "", [N], [n], 0, 0, ""),
    ("binary", "add", "broadcast", [8192, 8192], [512, 512], 0, 0, ""),
    ("binary", "mul", "", [N], [n], 0, 0, ""),
    ("binary", "mul", "broadcast", [8192, 8192], [512, 512], 0, 0, ""),
    ("reduce", "sum", "dim1", [8192, 8192], [512, 512], 0, 0, "sum of each row"),
    ("reduce", "sum", "dim0", [8192, 8192], [512, 512], 0, 0, "sum of each column"),
    ("norm", "softmax", "dim1", [8192, 8192], [512, 512], 0, 0, "softmax of each row"),
    ("norm", "layer_norm", "", [8192, 8192], [512, 512], 0, 0, "no affine"),
    ("norm", "rms_norm", "", [8192, 8192], [512, 512], 0, 0, "no affine"),
    ("matmul", "matmul", "", [1024] * 3, [64] * 3, 0, 0, ""),
    ("matmul", "matmul", "", [4096] * 3, [96] * 3, 0, 0, ""),
    ("matmul", "matmul", "", [8192] * 3, [128] * 3, 0, 0, ""),
    ("matmul", "matmul", "", [64, 512, 512, 512], [4, 32, 32, 32], 0, 0, "batched"),
    ("matmul", "matmul", "", [8192, 8192, 64], [256, 256, 16], 0, 0, "skinny N"),
    ("matmul", "matmul", "", [1, 4096, 4096], [1, 256, 256], 0, 0, "decode (GEMV)"),
    ("matmul", "matmul", "", [4096] * 3, [96] * 3, 0, 0, "f16 storage", "f16"),
    ("matmul", "matmul", "", [1, 4096, 4096], [1, 256, 256], 0, 0, "f16 storage, decode", "f16"),
    ("conv", "conv2d", "", [32, 3, 224, 224, 64, 7, 7, 2, 3], [1, 3, 16, 16, 4, 7, 7, 2, 3], 0, 0, "conv1 7x7/2"),
    ("conv", "conv2d", "", [32, 64, 56, 56, 64, 3, 3, 1, 1], [1, 4, 8, 8, 4, 3, 3, 1, 1], 0, 0, "conv2_x 3x3"),
    ("conv", "conv2d", "", [32, 64, 56, 56, 256, 1, 1, 1, 0], [1, 4, 8, 8, 8, 1, 1, 1, 0], 0, 0, "conv2_x 1x1 expand"),
    ("conv", "conv2d", "", [32, 256, 56, 56, 64, 1, 1, 1, 0], [1, 8, 8, 8, 4, 1, 1, 1, 0], 0, 0, "conv2_x 1x1 reduce"),
    ("conv", "conv2d", "", [32, 128, 28, 28, 128, 3, 3, 1, 1], [1, 4, 8, 8, 4, 3, 3, 1, 1], 0, 0, "conv3_x 3x3"),
    ("conv", "conv2d", "", [32, 256, 14, 14, 256, 3, 3, 1, 1], [1, 4, 6, 6, 4, 3, 3, 1, 1], 0, 0, "conv4_x 3x3"),
    ("conv", "conv2d", "", [32, 512, 7, 7, 512, 3, 3, 1, 1], [1, 4, 5, 5, 4, 3, 3, 1, 1], 0, 0, "conv5_x 3x3"),
    ("attention", SDPA, "causal", [8, 16, 2048, 2048, 64], [1, 2, 64, 64, 16], 0, 0, "causal prefill"),
    ("attention", SDPA, "", [1, 16, 1, 8192, 64], [1, 2, 1, 128, 16], 0, 0, "decode, 8k KV"),
    ("attention", SDPA, "causal", [8, 16, 2048, 2048, 64], [1, 2, 64, 64, 16], 0, 0,
     "causal prefill, f16 storage", "f16"),
    ("sample", "sample", "", [1, 131072], [1, 4096], 0, 0, "1 row, 128k vocab, T 0.8, top_k 50, top_p 0.9"),
    ("sample", "sample", "", [32, 131072], [4, 4096], 0, 0, "32 rows, 128k vocab, T 0.8, top_k 50, top_p 0.9"),
    ("sample", "sample", "greedy", [1, 131072], [1, 4096], 0, 0, "1 row, 128k vocab, greedy"),
    ("latency", "add", "chain", [256], [256], 10000, 500, "dependent in-place adds"),
    ("latency", "add", "graph", [256], [256], 10000, 500, "the chain's adds recorded once (ABI 1.2 graph), replayed"),
    ("latency", "add", "sync", [256], [256], 0, 0, "one op + synchronize"),
    ("mlp", "gated_mlp", "graph", [1, 4096, 11008], [1, 64, 176], 0, 0, "gated MLP block, decode"),
    ("mlp", "gated_mlp", "graph", [8, 4096, 11008], [8, 64, 176], 0, 0, "gated MLP block, 8 tokens"),
    ("mlp", "rms_norm_scale", "graph", [1, 4096], [1, 64], 0, 0, "rms_norm * w, decode"),
    ("mlp", "rms_norm_scale", "graph", [2048, 4096], [16, 64], 0, 0, "rms_norm * w, 2048 tokens"),
    ("mlp", "layer_norm_scale", "graph", [1, 4096], [1, 64], 0, 0, "layer_norm * w + b, decode"),
    ("mlp", "layer_norm_scale", "graph", [2048, 4096], [16, 64], 0, 0, "layer_norm * w + b, 2048 tokens"),
    ("first_op", "first_op", "cold", [256] * 3, [64] * 3, 0, 0, "child process, empty program cache"),
    ("first_op", "first_op", "warm", [256] * 3, [64] * 3, 0, 0, "child process, warm program cache"),
    ("memory", "memory", "", [1024], [8], 0, 0, "mixed workload, then all freed"),
]
DTYPE_SIZE = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i8": 1, "u8": 1, "bool": 1}


def shape_str(dims):
    return "x".join(str(d) for d in dims)


def case_key(op, variant, dims, dtype):
    return "%s%s %s %s" % (op, "[%s]" % variant if variant else "", shape_str(dims), dtype)


def prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def axis_of(variant, rank):
    if not variant:
        return rank - 1
    a = int(variant[3:])
    return a + rank if a < 0 else a


def accounting(op, variant, dims, dtype):
    """Bytes and FLOPs per run, as tensorgl-bench counts them (each operand once; 2MNK for
    matmul, one FLOP per element of the largest operand otherwise)."""
    s = DTYPE_SIZE[dtype]
    numel = prod(dims)
    if op == "buffer_copy":
        return 2 * numel * s, 0
    if op == "buffer_fill":
        return numel * s, 0
    if op in ("first_op", "memory"):
        return 0, 0
    if op == "conv2d":
        nb, c, h, w, k, r, ss, st, pad = dims
        p, q = (h + 2 * pad - r) // st + 1, (w + 2 * pad - ss) // st + 1
        return (nb * c * h * w + k * c * r * ss + nb * k * p * q) * s, 2 * nb * k * p * q * c * r * ss
    if op == SDPA:
        b, hh, sq, skv, d = dims
        return (2 * b * hh * sq * d + 2 * b * hh * skv * d) * s, \
            4 * b * hh * sq * skv * d * (0.5 if variant == "causal" else 1.0)
    if op == "matmul":
        b, (m, k, nn) = prod(dims[:-3]), dims[-3:]
        return b * (m * k + k * nn + m * nn) * s, 2 * b * m * nn * k
    if op == "sample":
        return numel * s + dims[0] * 4, numel
    if op == "gated_mlp":  # as cases.cpp: each of the five ops' operands once
        t, d, f = dims
        return (3 * d * f + 2 * t * d + 2 * t * f + t * f + t * d + 2 * t * f + 3 * t * f) * s, 6 * t * d * f + 2 * t * f
    if op in ("rms_norm_scale", "layer_norm_scale"):  # as cases.cpp: the norm (x, h), mul, add
        t, d = dims
        layer = op == "layer_norm_scale"
        return ((6 * t * d + 2 * d) if layer else (4 * t * d + d)) * s, (2 if layer else 1) * t * d
    if op in ("sum",):
        ax = axis_of(variant, len(dims))
        return (numel + numel // dims[ax]) * s, numel
    if op in ("add", "mul"):
        nb = (dims[-1] if len(dims) >= 2 else 1) if variant == "broadcast" else numel
        return (2 * numel + nb) * s, numel
    return 2 * numel * s, numel  # unary, softmax, layer_norm


def cases_from_table(suites, quick, dtypes):
    out = []
    seen = set()
    for entry in SUITES:
        (suite, op, variant, full, small, bfull, bquick, label) = entry[:8]
        if not any(r == "all" or r == suite or (r == "elementwise" and suite in ("unary", "binary"))
                   for r in suites):
            continue
        for dt in ([entry[8]] if len(entry) > 8 else dtypes):
            key = case_key(op, variant, small if quick else full, dt)
            if key in seen:
                continue
            seen.add(key)
            dims = small if quick else full
            out.append(dict(suite=suite, op=op, variant=variant, dims=list(dims), dtype=dt,
                            label=label, batch=bquick if quick else bfull))
    return out


def cases_from_ours(ours):
    out = []
    for r in ours["results"]:
        batch = 0
        if r["variant"] in ("chain", "graph"):
            batch = r.get("batch") or 10000
        out.append(dict(suite=r["suite"], op=r["op"], variant=r["variant"], dims=list(r["dims"]),
                        dtype=r["dtype"], label=r.get("label", ""), batch=batch,
                        bytes=r.get("bytes"), flops=r.get("flops")))
    return out


# ---------------------------------------------------------------------------------------------
# PyTorch recipes: case -> a function that queues one run.

def make_runner(torch, case, dev):
    op, variant, dims, dt = case["op"], case["variant"], case["dims"], case["dtype"]
    dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}.get(dt)
    if dtype is None:
        raise NotImplementedError("dtype %s has no PyTorch recipe here" % dt)
    full = lambda shape: torch.full(shape, 0.5, dtype=dtype, device=dev)  # noqa: E731
    F = torch.nn.functional
    if op == "buffer_copy":
        src, dst = full(dims), full(dims)
        return lambda: dst.copy_(src)
    if op == "buffer_fill":
        dst = full(dims)
        return lambda: dst.fill_(0.5)
    if op == "matmul":
        batch, (m, k, nn) = dims[:-3], dims[-3:]
        a, b, c = full(batch + [m, k]), full(batch + [k, nn]), full(batch + [m, nn])
        return lambda: torch.matmul(a, b, out=c)
    if op == "gated_mlp":  # y = (silu(x Wg) * (x Wu)) Wd, every result into its own buffer
        t, d, f = dims
        x, wg, wu, wd, y = full([t, d]), full([d, f]), full([d, f]), full([f, d]), full([t, d])
        g, u, a, h = full([t, f]), full([t, f]), full([t, f]), full([t, f])

        def mlp():
            torch.matmul(x, wg, out=g)
            torch.matmul(x, wu, out=u)
            torch.ops.aten.silu.out(g, out=a)
            torch.mul(a, u, out=h)
            torch.matmul(h, wd, out=y)
        return mlp
    if op in ("rms_norm_scale", "layer_norm_scale"):  # the norm without affine, then * w (+ b)
        t, d = dims
        x, w, b, y, tt = full([t, d]), full([d]), full([d]), full([t, d]), full([t, d])

        def norm(v):
            if op == "layer_norm_scale":
                return F.layer_norm(v, (d,), eps=1e-5)
            if hasattr(F, "rms_norm"):
                return F.rms_norm(v, (d,), eps=1e-5)
            return v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-5)

        def block():
            h = norm(x)
            if op == "layer_norm_scale":
                torch.mul(h, w, out=tt)
                torch.add(tt, b, out=y)
            else:
                torch.mul(h, w, out=y)
        return block
    if op in ("add", "mul"):
        x = full(dims)
        if variant == "broadcast":
            y = full([dims[-1]] if len(dims) >= 2 else [1])
        else:
            y = full(dims)
        fn = torch.add if op == "add" else torch.mul
        if variant in ("chain", "graph", "sync"):
            inplace = x.add_ if op == "add" else x.mul_
            return lambda: inplace(y)
        out = full(dims)
        return lambda: fn(x, y, out=out)
    if op == "sum":
        x = full(dims)
        ax = axis_of(variant, len(dims))
        out = torch.empty([d for i, d in enumerate(dims) if i != ax], dtype=dtype, device=dev)
        return lambda: torch.sum(x, dim=ax, out=out)
    if op == "softmax":
        x = full(dims)
        ax = axis_of(variant, len(dims))
        return lambda: torch.softmax(x, dim=ax)
    if op == "layer_norm":
        x = full(dims)
        return lambda: F.layer_norm(x, (dims[-1],), eps=1e-5)
    if op == "rms_norm":
        x = full(dims)
        if hasattr(F, "rms_norm"):
            return lambda: F.rms_norm(x, (dims[-1],), eps=1e-5)
        return lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
    if op == "conv2d":
        nb, c, h, w, k, r, ss, st, pad = dims
        x, wt = full([nb, c, h, w]), full([k, c, r, ss])
        return lambda: F.conv2d(x, wt, stride=st, padding=pad)
    if op == SDPA:
        b, hh, sq, skv, d = dims
        q, k_, v = full([b, hh, sq, d]), full([b, hh, skv, d]), full([b, hh, skv, d])
        causal = variant == "causal"
        return lambda: F.scaled_dot_product_attention(q, k_, v, is_causal=causal)
    if op == "sample":
        # What Hugging Face's and llama.cpp's samplers do: greedy is an argmax; otherwise
        # temperature, top_k, softmax of the kept logits, top_p on their running sum, one draw.
        x = full(dims)
        if variant == "greedy":
            return lambda: torch.argmax(x, dim=-1)

        def draw():
            v, i = torch.topk(x / 0.8, 50, dim=-1)
            p = torch.softmax(v, dim=-1)
            p = p.masked_fill(torch.cumsum(p, dim=-1) - p > 0.9, 0.0)
            return i.gather(-1, torch.multinomial(p, 1))
        return draw
    x, out = full(dims), full(dims)
    if op == "relu":
        return lambda: torch.relu(x)
    if op == "gelu":
        return lambda: F.gelu(x)
    fn = getattr(torch, op, None)  # exp, sigmoid, tanh, ... (unary ops of the same name)
    if fn is None:
        raise NotImplementedError("op %s has no PyTorch recipe here" % op)
    return lambda: fn(x, out=out)


def median_mad(xs):
    med = statistics.median(xs)
    return med, statistics.median([abs(x - med) for x in xs])


def measure(sample, cfg, fixed_batch=0, warm=True):
    """The loop of bench/timing.cpp: first (cold) run, batch calibration, warm-up, samples until
    MAD/median < target or time runs out. sample(batch) returns seconds per run."""
    first = sample(fixed_batch or 1)
    per_run = first
    batch = fixed_batch
    if not batch:
        if warm:  # calibrated on a warm run, as bench/timing.cpp
            per_run = min(per_run, sample(1))
        batch = int(min(max(math.ceil(cfg["target_sample_s"] / max(per_run, 1e-9)), 1),
                        cfg["max_batch"]))
    warmup_samples, settled = 0, True
    if warm and cfg["warmup_s"] > 0:  # until timings settle, as bench/timing.cpp (timing.h: why)
        ws, t0 = [], time.monotonic()
        while True:
            ws.append(sample(batch))
            elapsed = time.monotonic() - t0
            last = ws[-cfg["settle_samples"]:]
            if (elapsed >= cfg["warmup_s"] and len(last) == cfg["settle_samples"]
                    and max(last) <= min(last) * (1 + cfg["settle_rel"])):
                break
            if elapsed >= cfg["warmup_max_s"]:
                settled = False
                break
        warmup_samples = len(ws)
    xs, t0 = [], time.monotonic()
    while True:
        xs.append(sample(batch))
        med, mad = median_mad(xs)
        elapsed = time.monotonic() - t0
        if len(xs) >= cfg["max_samples"]:
            break
        if len(xs) >= cfg["min_samples"] and (mad / med <= cfg["target_rel_mad"]
                                              or elapsed >= cfg["max_time_s"]):
            break
        if elapsed >= 4 * cfg["max_time_s"]:
            break
    med, mad = median_mad(xs)
    return dict(median_s=med, mad_s=mad, min_s=min(xs), first_s=first, samples=len(xs),
                batch=batch, warmup_samples=warmup_samples, settled=settled)


_NVML = []


def sm_clock_mhz(device=0):
    """The GPU's SM clock in MHz from NVML (bench/gpu_clock.cpp does the same), None if unknown."""
    import ctypes
    if not _NVML:
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            count, handle = ctypes.c_uint(), ctypes.c_void_p()
            ok = (lib.nvmlInit_v2() == 0 and lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) == 0
                  and device < count.value
                  and lib.nvmlDeviceGetHandleByIndex_v2(device, ctypes.byref(handle)) == 0)
            _NVML.append((lib, handle) if ok else None)
        except OSError:
            _NVML.append(None)
    if not _NVML[0]:
        return None
    lib, handle = _NVML[0]
    mhz = ctypes.c_uint()
    return mhz.value if lib.nvmlDeviceGetClockInfo(handle, 1, ctypes.byref(mhz)) == 0 else None


FIRST_OP_CHILD = r"""
import sys, time
t_main = time.monotonic()
import torch
t_import = time.monotonic()
m, k, n = (int(v) for v in sys.argv[1:4])
dev = torch.device("cuda", int(sys.argv[4]))
torch.backends.cuda.matmul.allow_tf32 = False
a = torch.full((m, k), 0.5, device=dev); b = torch.full((k, n), 0.5, device=dev)
t_init = time.monotonic()
c = (a @ b).cpu()
t_result = time.monotonic()
ok = abs(float(c[0, 0]) - 0.25 * k) <= 1e-3 * k
print("TORCH_FIRST_OP %.9f %.9f %.9f %.9f %d" % (t_main, t_import, t_init, t_result, ok))
"""


def run_torch(cases, args):
    import torch
    if not torch.cuda.is_available():
        sys.exit("torch_compare: CUDA is not available to PyTorch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    cfg = dict(warmup_s=0.2, warmup_max_s=3.0, settle_samples=3, settle_rel=0.03,
               target_sample_s=0.02, max_batch=1000, min_samples=5,
               max_samples=100, target_rel_mad=0.02, max_time_s=args.max_time or 2.0)
    if args.quick:
        cfg.update(warmup_s=0, target_sample_s=0.002, max_batch=20, min_samples=3, max_samples=20,
                   max_time_s=args.max_time or 0.15)
    props = torch.cuda.get_device_properties(dev)
    run = dict(schema=SCHEMA, tool="torch_compare", quick=bool(args.quick),
               timing=dict(method="cuda_events", gpu_timer="CUDA events (sync rows: wall clock)",
                           **cfg),
               plugin=dict(name="torch", version=torch.__version__, path=torch.__file__),
               device=dict(index=args.device, properties={
                   "name": props.name, "renderer": props.name,
                   "api.version": "CUDA %s" % torch.version.cuda,
                   "driver.version": "", "memory.bytes": str(props.total_memory),
                   "allow_tf32": "False"}),
               results=[])
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i, c in enumerate(cases):
        key = case_key(c["op"], c["variant"], c["dims"], c["dtype"])
        print("[%d/%d] torch: %s" % (i + 1, len(cases), key), file=sys.stderr, flush=True)
        row = dict(key=key, suite=c["suite"], op=c["op"], variant=c["variant"], label=c["label"],
                   shape=shape_str(c["dims"]), dims=c["dims"], dtype=c["dtype"], status="ok",
                   reason="", gpu_ms=None, note="")
        b, f = accounting(c["op"], c["variant"], c["dims"], c["dtype"])
        row["bytes"] = c.get("bytes") or b  # ours has 0 for a row it skipped
        row["flops"] = c.get("flops") or f
        try:
            if c["op"] == "first_op" and c["variant"] == "warm":
                raise NotImplementedError("PyTorch keeps no program cache of ours: see first_op[cold]")
            if c["op"] == "first_op":
                st, note = first_op(c, args, cfg)
                row["note"] = note
                row["bytes"] = row["flops"] = 0
            elif c["op"] == "memory":
                st, extra, note = memory_case(torch, c, dev)
                row["note"], row["extra"] = note, extra
            else:
                fn = make_runner(torch, c, dev)
                sync_each = c["variant"] == "sync"
                graphs = {}  # "graph": batch -> a CUDAGraph of `batch` runs, captured untimed

                def sample(batch):
                    if c["variant"] == "graph":
                        if batch not in graphs:
                            s = torch.cuda.Stream()
                            s.wait_stream(torch.cuda.current_stream())
                            with torch.cuda.stream(s):  # warm-up outside the capture, as documented
                                fn()
                            torch.cuda.current_stream().wait_stream(s)
                            g = torch.cuda.CUDAGraph()
                            with torch.cuda.graph(g):
                                for _ in range(batch):
                                    fn()
                            graphs[batch] = g
                        start.record()
                        graphs[batch].replay()
                        end.record()
                        end.synchronize()
                        return start.elapsed_time(end) / 1e3 / batch
                    if sync_each:  # wall clock around op + synchronize
                        torch.cuda.synchronize()
                        t0 = time.perf_counter()
                        for _ in range(batch):
                            fn()
                            torch.cuda.synchronize()
                        return (time.perf_counter() - t0) / batch
                    start.record()
                    for _ in range(batch):
                        fn()
                    end.record()
                    end.synchronize()
                    return start.elapsed_time(end) / 1e3 / batch

                st = measure(sample, cfg, c.get("batch") or 0)
                st["sm_clock_mhz"] = sm_clock_mhz(args.device)
                graphs.clear()
                if c["variant"] in ("chain", "graph", "sync"):
                    row["note"] = "%.2f us/op" % (st["median_s"] * 1e6)
                torch.cuda.synchronize()
                del fn
                torch.cuda.empty_cache()
        except NotImplementedError as e:
            row.update(status="skipped", reason=str(e))
        except Exception as e:  # noqa: BLE001 - one failing row must not stop the run
            row.update(status="error", reason="%s: %s" % (type(e).__name__, e))
            torch.cuda.empty_cache()
        if row["status"] == "ok":
            med = st["median_s"]
            row.update(median_ms=med * 1e3, mad_ms=st["mad_s"] * 1e3, rel_mad=st["mad_s"] / med,
                       min_ms=st["min_s"] * 1e3, first_ms=st["first_s"] * 1e3,
                       samples=st["samples"], batch=st["batch"],
                       warmup_samples=st.get("warmup_samples", 0), settled=st.get("settled", True),
                       sm_clock_mhz=st.get("sm_clock_mhz"),
                       gbps=row["bytes"] / med / 1e9 if row["bytes"] else None,
                       gflops=row["flops"] / med / 1e9 if row["flops"] else None)
        else:
            row.update(median_ms=None, mad_ms=None, rel_mad=None, min_ms=None, first_ms=None,
                       samples=0, batch=0, gbps=None, gflops=None)
        run["results"].append(row)
    copy = next((r["gbps"] for r in run["results"]
                 if r["op"] == "buffer_copy" and r["status"] == "ok"), None)
    run["copy_gbps"] = copy
    for r in run["results"]:
        r["pct_copy"] = 100 * r["gbps"] / copy if copy and r.get("gbps") else None
    return run


def memory_case(torch, c, dev):
    """PyTorch's caching allocator after the same mixed workload: allocated (live) and reserved
    (held) bytes, then after every tensor is dropped (reserved stays until empty_cache)."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    live0, held0 = torch.cuda.memory_allocated(dev), torch.cuda.memory_reserved(dev)
    side = max(64, int(math.sqrt(c["dims"][0] * (1 << 20) / 4 / 8)))
    t0 = time.monotonic()
    keep = []
    for (op, variant, dims) in [("add", "", [side * side]), ("mul", "broadcast", [side, side]),
                                ("sum", "dim1", [side, side]), ("sum", "dim0", [side, side]),
                                ("softmax", "dim1", [side, side]), ("layer_norm", "", [side, side]),
                                ("matmul", "", [side // 2] * 3)]:
        fn = make_runner(torch, dict(op=op, variant=variant, dims=dims, dtype=c["dtype"]), dev)
        for _ in range(3):
            keep.append(fn())
        keep.append(fn)
        del fn
    torch.cuda.synchronize()
    wall = time.monotonic() - t0
    live, held = torch.cuda.memory_allocated(dev) - live0, torch.cuda.memory_reserved(dev) - held0
    del keep
    torch.cuda.synchronize()
    held_after = torch.cuda.memory_reserved(dev) - held0
    st = dict(median_s=wall, mad_s=0, min_s=wall, first_s=wall, samples=1, batch=1)
    extra = dict(live_bytes=live, held_bytes=held, held_over_live=held / live if live else 0,
                 held_after_free_bytes=held_after)
    note = "warm: live %.1f MiB, held %.1f MiB (%.3fx); after free: held %.2f MiB (caching allocator)" % (
        live / 1048576, held / 1048576, held / live if live else 0, held_after / 1048576)
    return st, extra, note


def first_op(c, args, cfg):
    m, k, nn = c["dims"][-3:]
    last = {}

    def sample(_batch):
        t_spawn = time.monotonic()
        out = subprocess.run([sys.executable, "-c", FIRST_OP_CHILD, str(m), str(k), str(nn),
                              str(args.device)], capture_output=True, text=True, check=False)
        line = [l for l in out.stdout.splitlines() if l.startswith("TORCH_FIRST_OP ")]
        if out.returncode != 0 or not line:
            raise RuntimeError("first_op child failed: %s" % out.stderr[-2000:])
        t_main, t_import, t_init, t_result, ok = line[0].split()[1:]
        if ok != "1" and ok != "True":
            raise RuntimeError("first_op child: wrong result")
        last.update(spawn=t_spawn, main=float(t_main), imp=float(t_import), init=float(t_init),
                    result=float(t_result))
        return float(t_result) - t_spawn

    fcfg = dict(cfg, min_samples=2 if args.quick else 3, max_samples=2 if args.quick else 5,
                target_rel_mad=0.05)
    st = measure(sample, fcfg, 1, warm=False)
    note = ("cold 1st %.1f ms; last: exec %.1f, import torch %.1f, cuda init+alloc %.1f, "
            "op+read %.1f ms" % (st["first_s"] * 1e3, (last["main"] - last["spawn"]) * 1e3,
                                 (last["imp"] - last["main"]) * 1e3,
                                 (last["init"] - last["imp"]) * 1e3,
                                 (last["result"] - last["init"]) * 1e3))
    return st, note


# ---------------------------------------------------------------------------------------------
# Ratios.

def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    if a >= 0.01:
        return "%.4f" % v
    return "%.3g" % v


def relative_to(row, other_variant, other_dtype, factor, text):
    """A target against another row of ours: this row at least `factor` times faster."""
    def check(o, t, r, by):
        key = case_key(row["op"], other_variant, row["dims"], other_dtype)
        ref = by.get(key)
        if not ref or ref.get("status") != "ok" or o.get("status") != "ok":
            return None
        return ref["median_ms"] >= factor * o["median_ms"]
    return (text, check)


def at_most_ms(limit, text):
    return (text, lambda o, t, r, by: None if o.get("status") != "ok" else o["median_ms"] <= limit)


def target_of(row):
    """The issue's target for a row: (text, check) where check(ours_row, torch_row, ratio,
    ours_by_key) gives True/False, or None when the row has no target. Issue 19 (speed, round 2)
    and issue 18's GGUF rows."""
    op, variant, dims, dt = row["op"], row["variant"], row["dims"], row["dtype"]
    ratio_at_least = lambda x: ((">= %.2f" % x), lambda o, t, r, by: None if r is None else r >= x)  # noqa: E731
    decode = len(dims) == 3 and dims[0] == 1
    if op == "linear" and row["suite"] == "gguf":
        if variant in ("q4_0", "q4_K") and dims == [1, 4096, 4096]:
            return relative_to(row, "", dt, 2.5, ">= 2.5x our f16 W")
        if variant == "q8_0" and dims == [1, 4096, 4096]:
            return relative_to(row, "", dt, 1.6, ">= 1.6x our f16 W")
        return None
    if dt == "f16" and op == "matmul":
        if decode:
            return relative_to(row, variant, "f32", 1.0, "faster than our f32")
        return relative_to(row, variant, "f32", 1.5, ">= 1.5x our f32")
    if dt == "f16" and op == SDPA:
        return relative_to(row, variant, "f32", 1.5, ">= 1.5x our f32")
    if variant in ("chain", "graph", "sync"):
        return None  # chain, graph: chain_target; sync: no target (a round trip, for information)
    if op in ("buffer_copy", "add", "mul") or row["suite"] == "unary":
        return ratio_at_least(0.95)
    if op in ("sum", "softmax", "layer_norm", "rms_norm"):
        return ratio_at_least(0.90)
    if op == "matmul":
        if decode:
            return ratio_at_least(0.85)
        big = len(dims) == 3 and dims[0] == dims[1] == dims[2] and dims[0] >= 4096
        return ratio_at_least(0.70 if big else 0.60)
    if op == "conv2d":
        return ratio_at_least(0.50)
    if op == SDPA and variant == "causal":
        return ratio_at_least(0.60)
    if op == SDPA and not variant:
        return ratio_at_least(1.0)
    if op == "sample" and dims[0] == 1 and variant != "greedy":
        return at_most_ms(0.1, "<= 0.1 ms")
    if op == "first_op":
        limit = 150.0 if variant == "cold" else 50.0
        return at_most_ms(limit, "<= %.0f ms" % limit)
    if op == "memory":
        def held(o, t, r, by):
            e = o.get("extra") or {}
            if o.get("status") != "ok" or not e.get("live_bytes"):
                return None
            return e["held_over_live"] <= 1.1 and e["held_after_free_bytes"] <= 0.01 * e["live_bytes"]
        return ("held <= 1.1 x live, returned on free", held)
    return None


def chain_target(row):
    """Issue 19's latency targets: queued one by one <= 4 us/op, a replayed graph <= 2 us/op."""
    if row["op"] == "add" and row["variant"] in ("chain", "graph"):
        limit = 4.0 if row["variant"] == "chain" else 2.0
        return ("<= %.0f us/op" % limit,
                lambda o, t, r, by: None if o.get("status") != "ok" else o["median_ms"] * 1e3 <= limit)
    return None


def ratio_rows(ours, torch_run):
    """Rows matched by key: ours/torch throughput = torch median / ours median (> 1: ours is
    faster). Returns a list of dicts (also used by plot.py)."""
    theirs = {r["key"]: r for r in torch_run["results"]}
    by_key = {r["key"]: r for r in ours["results"]}
    rows = []
    for r in ours["results"]:
        t = theirs.get(r["key"])
        ok = r.get("status") == "ok" and t is not None and t.get("status") == "ok"
        ratio = None
        if ok and r.get("median_ms") and t.get("median_ms"):
            ratio = t["median_ms"] / r["median_ms"]
        tg = chain_target(r) or target_of(r)
        met = tg[1](r, t or {}, ratio, by_key) if tg else None
        rows.append(dict(key=r["key"], suite=r["suite"], op=r["op"], variant=r["variant"],
                         shape=r["shape"], dtype=r["dtype"], label=r.get("label", ""),
                         ours=r, torch=t, ratio=ratio,
                         target=tg[0] if tg else "", met=met,
                         status=("ok" if ok else "ours: %s, torch: %s" % (
                             r.get("status"), t.get("status") if t else "missing"))))
    return rows


def markdown_table(ours, torch_run, before=None):
    """The ratio table; `before` (a baseline file such as bench/baseline-issue19.json: rows by key
    with ours_ms and ratio) adds before columns."""
    name = lambda run: "%s on %s" % (run["plugin"]["name"],  # noqa: E731
                                     run["device"]["properties"].get("renderer", "?"))
    lines = ["Ours: %s. PyTorch: %s (%s). Ratio = ours/torch throughput (> 1: ours is faster)."
             % (name(ours), name(torch_run), torch_run["plugin"].get("version", "?")),
             "Ours is timed by wall clock around synchronize (gpu ms: the ABI 1.1 device timer where "
             "the driver has one); PyTorch by CUDA events. met: the issue's target for the row "
             "(ratios: ours/torch; latency, first_op, memory, sample: ours alone; f16: ours f16 vs ours f32; "
             "GGUF: ours against our f16 weights).",
             "" if not before else "Before: %s." % before["source"],
             "",
             "| op | shape | dtype | ours ms | ours gpu ms | torch ms | ours/torch | before ms | before ours/torch "
             "| target | met | ours GB/s | torch GB/s | ours GFLOP/s | torch GFLOP/s | SM MHz ours / torch | note |",
             "|---|---|---|--:|--:|--:|--:|--:|--:|---|---|--:|--:|--:|--:|--:|---|"]
    old = (before or {}).get("rows", {})
    for row in ratio_rows(ours, torch_run):
        o, t = row["ours"], row["torch"] or {}
        op = row["op"] + ("[%s]" % row["variant"] if row["variant"] else "")
        note = row["label"] if row["status"] == "ok" else row["status"]
        if o.get("status") != "ok" and o.get("reason"):
            note += " (%s)" % o["reason"]
        elif o.get("note") and (row["variant"] in ("chain", "graph") or row["op"] in ("first_op", "memory")):
            note += "; " + o["note"]
        met = {True: "yes", False: "**no**", None: "-"}[row["met"]]
        clocks = "%s / %s" % (o.get("sm_clock_mhz") or "-", t.get("sm_clock_mhz") or "-")
        if o.get("settled") is False or t.get("settled") is False:
            note += "; warm-up did not settle (%s)" % ("ours" if o.get("settled") is False else "torch")
        b = old.get(row["key"], {})
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            op, row["shape"], row["dtype"], fmt(o.get("median_ms")), fmt(o.get("gpu_ms")),
            fmt(t.get("median_ms")),
            "%.3f" % row["ratio"] if row["ratio"] is not None else "-",
            fmt(b.get("ours_ms")), "%.3f" % b["ratio"] if b.get("ratio") is not None else "-",
            row["target"] or "-", met,
            fmt(o.get("gbps")), fmt(t.get("gbps")), fmt(o.get("gflops")), fmt(t.get("gflops")),
            clocks, note.replace("|", "/")))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ours", help="tensorgl-bench JSON: run its rows and print ratios")
    ap.add_argument("--torch", help="PyTorch JSON written before: ratios only, no GPU run")
    ap.add_argument("--suite", default="all", help="comma-separated suites (without --ours)")
    ap.add_argument("--dtype", default="f32", help="comma-separated dtypes (without --ours)")
    ap.add_argument("--quick", action="store_true", help="tiny shapes, short timing")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--max-time", type=float, default=None, help="seconds of sampling per case")
    ap.add_argument("--json", help="write PyTorch's results here")
    ap.add_argument("--markdown", help="write the ratio table here (needs --ours)")
    ap.add_argument("--before", help="baseline rows (e.g. bench/baseline-issue19.json) for the before columns")
    args = ap.parse_args()

    ours = None
    if args.ours:
        with open(args.ours) as f:
            ours = json.load(f)
        if ours.get("schema") != SCHEMA:
            sys.exit("torch_compare: %s is not a %s file" % (args.ours, SCHEMA))
        args.quick = args.quick or bool(ours.get("quick"))
    if args.torch:
        with open(args.torch) as f:
            torch_run = json.load(f)
    else:
        cases = (cases_from_ours(ours) if ours else
                 cases_from_table(args.suite.split(","), args.quick, args.dtype.split(",")))
        torch_run = run_torch(cases, args)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(torch_run, f, indent=2)
                f.write("\n")
        for r in torch_run["results"]:
            print("%-40s %-8s %10s ms %10s GB/s %10s GFLOP/s  %s" % (
                r["key"], r["status"], fmt(r.get("median_ms")), fmt(r.get("gbps")),
                fmt(r.get("gflops")), r.get("note") or r.get("reason", "")))
    if ours:
        before = None
        if args.before:
            with open(args.before) as f:
                before = json.load(f)
        table = markdown_table(ours, torch_run, before)
        print()
        print(table, end="")
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(table)
    elif args.markdown:
        sys.exit("torch_compare: --markdown needs --ours")
    bad = [r for r in torch_run["results"] if r["status"] == "error"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
