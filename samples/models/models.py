#!/usr/bin/env python3
"""Real networks on tensorgl: one script exports them from PyTorch and checks them on a plugin.

    models.py export NET --out DIR [--size full|small] [--batch N] [--seed S]
    models.py check  NET --dir DIR [--plugin gles] [--graph]

NET is resnet50, mobilenet_v3_large, vit_b_16, bert or gpt2 (samples/models/<NET>/README.md).
`export` builds the network with random weights from a fixed seed (nothing is downloaded), exports
it to ONNX (opset 17, static shapes) and writes beside it the inputs and PyTorch's outputs on the
CPU (expected_*.npy); `check` runs the ONNX file with tensorgl.onnx.InferenceSession and compares.

GPT-2 is two models sharing one weight set: prefill.onnx (the prompt -> last logits, next token
and the K/V cache) and decode.onnx (one token at a position + the cache -> logits, next token and
the updated cache). The cache has a fixed length (prompt + generated tokens) so that both models
have static shapes: the decode step writes the new K/V at `pos` (a one-hot blend) and attends to
positions <= pos (a mask). The greedy loop runs on the host; PyTorch's reference re-runs the full
prefix at every step, without a cache (an independent check of the cache logic).

The bench (bench/models.py) and the tests (samples/models/test_models.py) import this module.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

NETS = ("resnet50", "mobilenet_v3_large", "vit_b_16", "bert", "gpt2")

# Sizes: "full" is the named network; "small" keeps its structure at a size llvmpipe runs in
# seconds (the ctests). batch is the default batch.
CONFIGS = {
    # small ResNet-50: every block and op of the network, bottlenecks 16 rather than 64 channels
    # per group wide (llvmpipe spends seconds in each wide 3x3 conv even at a 1x1 output).
    "resnet50": {"full": {"image": 224, "width_per_group": 64}, "small": {"image": 32, "width_per_group": 16}},
    "mobilenet_v3_large": {"full": {"image": 224}, "small": {"image": 64}},
    "vit_b_16": {"full": {"image": 224, "patch": 16, "layers": 12, "heads": 12, "hidden": 768, "mlp": 3072},
                 "small": {"image": 32, "patch": 8, "layers": 2, "heads": 2, "hidden": 64, "mlp": 128}},
    "bert": {"full": {"vocab": 30522, "seq": 128, "layers": 12, "heads": 12, "hidden": 768, "mlp": 3072},
             "small": {"vocab": 256, "seq": 16, "layers": 2, "heads": 4, "hidden": 64, "mlp": 128}},
    "gpt2": {"full": {"vocab": 50257, "ctx": 1024, "layers": 12, "heads": 12, "hidden": 768, "prompt": 512, "new": 32},
             "small": {"vocab": 256, "ctx": 64, "layers": 2, "heads": 4, "hidden": 64, "prompt": 16, "new": 4}},
}

# Tolerances of `check` against PyTorch on the CPU (docs/models.md: how they were chosen).
# Elementwise |got - want| <= atol * max|want| + rtol * |want|; tokens must match exactly.
TOLERANCES = {
    "resnet50": {"rtol": 1e-3, "atol": 1e-4},
    "mobilenet_v3_large": {"rtol": 1e-3, "atol": 1e-4},
    "vit_b_16": {"rtol": 1e-3, "atol": 1e-4},
    "bert": {"rtol": 1e-3, "atol": 1e-4},
    "gpt2": {"rtol": 1e-3, "atol": 1e-4},
}


def torch_module():
    import torch
    return torch


# ---------------------------------------------------------------- networks

def make_gpt2(cfg):
    """A GPT-2-style decoder: token + position embeddings, pre-norm blocks of causal self-attention
    and a GELU MLP, a final LayerNorm and a head tied to the token embedding."""
    torch = torch_module()
    nn = torch.nn
    F = torch.nn.functional
    d, H = cfg["hidden"], cfg["heads"]

    def attend(q, k, v, allowed):
        # q (B,H,Tq,D), k/v (B,H,Tk,D), allowed (.., Tq, Tk) bool
        s = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
        s = s.masked_fill(~allowed, float("-inf"))
        return torch.matmul(torch.softmax(s, dim=-1), v)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def heads(self, x):  # (B,T,3d) -> q, k, v (B,H,T,D)
            B, T, _ = x.shape
            q, k, v = self.qkv(x).split(d, dim=-1)
            return [t.reshape(B, T, H, d // H).transpose(1, 2) for t in (q, k, v)]

        def mlp_and_proj(self, x, a):
            B, T, _ = x.shape
            x = x + self.proj(a.transpose(1, 2).reshape(B, T, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(cfg["vocab"], d), nn.Embedding(cfg["ctx"], d)
            self.blocks = nn.ModuleList([Block() for _ in range(cfg["layers"])])
            self.ln_f = nn.LayerNorm(d)
            # A zero bias: with it torch.onnx writes the head as Gemm(transB=1) over the embedding
            # itself (tied in the file too); without, as MatMul over a folded transposed copy.
            self.register_buffer("head_bias", torch.zeros(cfg["vocab"]))

        def head(self, x_last):  # (B,d) -> logits (B,V), the head tied to wte
            return F.linear(self.ln_f(x_last), self.wte.weight, self.head_bias)

        def forward(self, ids):
            """The full prefix, no cache (PyTorch's reference): logits of the last position."""
            T = ids.shape[1]
            x = self.wte(ids) + self.wpe(torch.arange(T, device=ids.device))
            allowed = torch.ones(T, T, dtype=torch.bool, device=ids.device).tril()
            for b in self.blocks:
                q, k, v = b.heads(b.ln1(x))
                x = b.mlp_and_proj(x, attend(q, k, v, allowed))
            return self.head(x[:, -1])

    cache_len = cfg["prompt"] + cfg["new"]

    class Prefill(nn.Module):
        def __init__(self, gpt):
            super().__init__()
            self.gpt = gpt

        def forward(self, ids):
            g, T = self.gpt, ids.shape[1]
            x = g.wte(ids) + g.wpe(torch.arange(T, device=ids.device))
            allowed = torch.ones(T, T, dtype=torch.bool, device=ids.device).tril()
            ks, vs = [], []
            for b in g.blocks:
                q, k, v = b.heads(b.ln1(x))
                ks.append(k)
                vs.append(v)
                x = b.mlp_and_proj(x, attend(q, k, v, allowed))
            logits = g.head(x[:, -1])
            pad = (0, 0, 0, cache_len - T)
            return (logits, logits.argmax(-1), F.pad(torch.stack(ks), pad), F.pad(torch.stack(vs), pad))

    class Decode(nn.Module):
        def __init__(self, gpt):
            super().__init__()
            self.gpt = gpt

        def forward(self, token, pos, k_cache, v_cache):
            g = self.gpt
            x = g.wte(token) + g.wpe(pos)  # (B,1,d)
            slots = torch.arange(cache_len, device=token.device)
            write = (slots == pos).to(x.dtype).reshape(cache_len, 1)  # blend the new K/V in at pos
            allowed = (slots <= pos).reshape(1, cache_len)
            ks, vs = [], []
            for i, b in enumerate(g.blocks):
                q, k, v = b.heads(b.ln1(x))
                k = k_cache[i] * (1.0 - write) + k * write
                v = v_cache[i] * (1.0 - write) + v * write
                ks.append(k)
                vs.append(v)
                x = b.mlp_and_proj(x, attend(q, k, v, allowed))
            logits = g.head(x[:, -1])
            return logits, logits.argmax(-1), torch.stack(ks), torch.stack(vs)

    gpt = GPT().eval()
    # GPT-2's initialisation (N(0, 0.02), positions 0.01, LayerNorm 1/0) rather than PyTorch's
    # defaults (embeddings N(0, 1)), under which the tied head only ever repeats the last token.
    with torch.no_grad():
        for name, prm in gpt.named_parameters():
            if name.endswith("bias") or ".ln" in name or name.startswith("ln_f"):
                continue
            prm.normal_(0.0, 0.01 if name.startswith("wpe") else 0.02)
    return gpt, Prefill(gpt).eval(), Decode(gpt).eval()


def make_bert(cfg):
    """A BERT-style encoder: token + position + segment-free embeddings with LayerNorm, then
    torch.nn.TransformerEncoder (post-norm, GELU), and a pooled tanh head over the first token."""
    torch = torch_module()
    nn = torch.nn
    d = cfg["hidden"]

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(cfg["vocab"], d), nn.Embedding(cfg["seq"], d)
            self.ln = nn.LayerNorm(d, eps=1e-12)
            layer = nn.TransformerEncoderLayer(d, cfg["heads"], cfg["mlp"], dropout=0.0, activation="gelu",
                                               batch_first=True, layer_norm_eps=1e-12)
            self.encoder = nn.TransformerEncoder(layer, cfg["layers"], enable_nested_tensor=False)
            self.pool = nn.Linear(d, d)

        def forward(self, ids):
            x = self.ln(self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device)))
            h = self.encoder(x)
            return h, torch.tanh(self.pool(h[:, 0]))

    return Bert().eval()


def make_vision(net, cfg):
    import torchvision
    if net == "resnet50":
        return torchvision.models.resnet50(weights=None, width_per_group=cfg["width_per_group"]).eval()
    if net == "mobilenet_v3_large":
        return torchvision.models.mobilenet_v3_large(weights=None).eval()
    from torchvision.models.vision_transformer import VisionTransformer
    vit = VisionTransformer(image_size=cfg["image"], patch_size=cfg["patch"], num_layers=cfg["layers"],
                            num_heads=cfg["heads"], hidden_dim=cfg["hidden"], mlp_dim=cfg["mlp"]).eval()
    # torchvision zero-initialises the classification head (logits would be the bias alone).
    torch_module().nn.init.normal_(vit.heads.head.weight, std=0.02)
    return vit


def randomize_norm_statistics(model, gen):
    """torchvision initialises BatchNorm with mean 0, var 1 (an identity): give the statistics
    values a trained network would have, so the export's BatchNormalization is really checked."""
    torch = torch_module()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2, generator=gen)
            m.running_var.uniform_(0.5, 1.5, generator=gen)
            m.weight.data.uniform_(0.5, 1.5, generator=gen)
            m.bias.data.uniform_(-0.2, 0.2, generator=gen)


def build(net, size="full", batch=1, seed=0, overrides=None):
    """(modules, example inputs): {"model": (module, {name: tensor})} or, for gpt2, prefill and
    decode modules and the full-prefix reference. Random weights from `seed`. overrides: {key:
    int} replacing entries of CONFIGS[net][size] (e.g. a shorter GPT-2 prompt)."""
    torch = torch_module()
    if net not in NETS:
        raise SystemExit("unknown network %r: expected one of %s" % (net, ", ".join(NETS)))
    if size not in CONFIGS[net]:
        raise SystemExit("unknown size %r: expected full or small" % size)
    cfg = dict(CONFIGS[net][size])
    for k, v in (overrides or {}).items():
        if k not in cfg:
            raise SystemExit("--config %s: %s has no such setting (it has %s)" % (k, net, ", ".join(cfg)))
        cfg[k] = int(v)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed + 1)
    if net == "gpt2":
        gpt, prefill, decode = make_gpt2(cfg)
        ids = torch.randint(0, cfg["vocab"], (batch, cfg["prompt"]), generator=gen)
        return {"gpt": gpt, "prefill": prefill, "decode": decode, "ids": ids, "cfg": cfg}
    if net == "bert":
        model = make_bert(cfg)
        return {"model": model, "inputs": {"ids": torch.randint(0, cfg["vocab"], (batch, cfg["seq"]), generator=gen)},
                "outputs": ["hidden", "pooled"], "cfg": cfg}
    model = make_vision(net, cfg)
    with torch.no_grad():
        randomize_norm_statistics(model, gen)
    x = torch.randn(batch, 3, cfg["image"], cfg["image"], generator=gen)
    return {"model": model, "inputs": {"image": x}, "outputs": ["logits"], "cfg": cfg}


def _plain_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **_):
    """scaled_dot_product_attention as MatMul, Softmax, MatMul (inference: no dropout)."""
    torch = torch_module()
    s = torch.matmul(q, k.transpose(-2, -1)) * (scale if scale is not None else 1.0 / math.sqrt(q.shape[-1]))
    if is_causal:
        s = s.masked_fill(~torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool, device=s.device).tril(), float("-inf"))
    if attn_mask is not None:
        s = s.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else s + attn_mask
    return torch.matmul(torch.softmax(s, dim=-1), v)


def onnx_export(module, args, path, input_names, output_names):
    """torch.onnx.export with static shapes and opset 17 (TorchScript exporter: the newer torch on
    the GPU machine defaults to the dynamo exporter, whose opset 18 the runtime does not load)."""
    import inspect
    torch = torch_module()
    kw = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    # Grad mode on: under no_grad, torch's MultiheadAttention/TransformerEncoderLayer take a fused
    # "fast path" (aten::_native_multi_head_attention) that the exporter cannot express. Torch 2's
    # MultiheadAttention calls F.scaled_dot_product_attention, whose export computes its scale
    # from shapes at run time: the plain form (the one torch 1.13 writes) keeps the graphs alike.
    F = torch.nn.functional
    sdpa = getattr(F, "scaled_dot_product_attention", None)
    try:
        if sdpa is not None:
            F.scaled_dot_product_attention = _plain_attention
        with torch.enable_grad():
            torch.onnx.export(module, args, path, opset_version=17, input_names=input_names,
                              output_names=output_names, do_constant_folding=True, **kw)
    finally:
        if sdpa is not None:
            F.scaled_dot_product_attention = sdpa
    # A newer torch stamps its own onnx's IR version (10 with onnx 1.23), which ONNX 1.12's checker
    # in the runtime refuses; opset 17 needs only IR 8, so the file is marked as such.
    import onnx
    model = onnx.load(path)
    if model.ir_version > 8:
        model.ir_version = 8
        onnx.save(model, path)


# The decode step's cache stays on the device from step to step: InferenceSession(carry=...) copies
# each step's new cache into the next step's input there (tglrt_load_options.carries).
GPT2_DECODE_CARRY = {"k_cache_out": "k_cache", "v_cache_out": "v_cache"}


def gpt2_decode_inputs(token, pos, k_cache=None, v_cache=None):
    """The decode step's feed; without caches: the carried ones."""
    feed = {"token": np.asarray(token, np.int64).reshape(-1, 1), "pos": np.array([pos], np.int64)}
    if k_cache is not None:
        feed.update(k_cache=k_cache, v_cache=v_cache)
    return feed


def export(net, out, size="full", batch=1, seed=0, reference=True, built=None, overrides=None):
    """Writes DIR/model.onnx (gpt2: prefill.onnx and decode.onnx), input_<name>.npy, meta.json
    and, with `reference`, PyTorch's outputs on the CPU (expected_<output>.npy). built: the
    result of build(net, size, batch, seed) if the caller has it."""
    torch = torch_module()
    os.makedirs(out, exist_ok=True)
    b = built or build(net, size, batch, seed, overrides)
    meta = {"net": net, "size": size, "batch": batch, "seed": seed, "torch": torch.__version__,
            "config": b["cfg"], "tolerance": TOLERANCES[net]}
    with torch.no_grad():
        if net == "gpt2":
            cfg = b["cfg"]
            ids = b["ids"]
            onnx_export(b["prefill"], (ids,), os.path.join(out, "prefill.onnx"), ["ids"],
                        ["logits", "next_token", "k_cache", "v_cache"])
            logits, nxt, kc, vc = b["prefill"](ids)
            dec_in = gpt2_decode_inputs(nxt.numpy(), cfg["prompt"], kc.numpy(), vc.numpy())
            onnx_export(b["decode"], tuple(torch.from_numpy(a) for a in dec_in.values()),
                        os.path.join(out, "decode.onnx"), list(dec_in), ["logits", "next_token", "k_cache_out", "v_cache_out"])
            np.save(os.path.join(out, "input_ids.npy"), ids.numpy())
            for k, a in dec_in.items():
                np.save(os.path.join(out, "decode_input_%s.npy" % k), a)
            meta["files"] = ["prefill.onnx", "decode.onnx"]
            # The reference: greedy decode re-running the full prefix at each step, no cache.
            seq, step_logits = ids, []
            for _ in range(cfg["new"] if reference else 0):
                lg = b["gpt"](seq)
                step_logits.append(lg.numpy())
                seq = torch.cat([seq, lg.argmax(-1, keepdim=True)], dim=1)
            meta["runs"] = [{"model": "prefill.onnx", "inputs": {"ids": "input_ids.npy"}, "expected": {}},
                            {"model": "decode.onnx", "inputs": {k: "decode_input_%s.npy" % k for k in dec_in}, "expected": {}}]
            if reference:
                np.save(os.path.join(out, "expected_tokens.npy"), seq[:, cfg["prompt"]:].numpy())
                np.save(os.path.join(out, "expected_step_logits.npy"), np.stack(step_logits))
                # tensorgl-run's checks: the prefill, and the first decode step (whose inputs are
                # the prefill's outputs: PyTorch's first token at position `prompt`).
                np.save(os.path.join(out, "prefill_expected_logits.npy"), step_logits[0])
                np.save(os.path.join(out, "decode_expected_logits.npy"), step_logits[1])
                meta["runs"][0]["expected"] = {"logits": "prefill_expected_logits.npy"}
                meta["runs"][1]["expected"] = {"logits": "decode_expected_logits.npy"}
        else:
            names = list(b["inputs"])
            args = tuple(b["inputs"].values())
            onnx_export(b["model"], args, os.path.join(out, "model.onnx"), names, b["outputs"])
            for n, t in b["inputs"].items():
                np.save(os.path.join(out, "input_%s.npy" % n), t.numpy())
            meta["files"] = ["model.onnx"]
            meta["runs"] = [{"model": "model.onnx", "inputs": {n: "input_%s.npy" % n for n in names}, "expected": {}}]
            if reference:
                outs = b["model"](*args)
                outs = outs if isinstance(outs, tuple) else (outs,)
                for n, t in zip(b["outputs"], outs):
                    np.save(os.path.join(out, "expected_%s.npy" % n), t.numpy())
                meta["runs"][0]["expected"] = {n: "expected_%s.npy" % n for n in b["outputs"]}
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


# ---------------------------------------------------------------- checking on tensorgl

def max_diff(got, want):
    """(max abs diff, max abs diff / max|want|): the figures docs/models.md reports."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    d = float(np.max(np.abs(got - want))) if got.size else 0.0
    return d, d / max(float(np.max(np.abs(want))), 1e-30)


def within(got, want, tol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return False
    bound = tol["atol"] * float(np.max(np.abs(want))) + tol["rtol"] * np.abs(want)
    return bool(np.all(np.abs(got - want) <= bound))


def gpt2_decode(decode, first, P, new_tokens, k_cache, v_cache, teacher=None):
    """Greedy decode steps after the prefill (its token `first`, its cache) with a decode session
    loaded with carry=GPT2_DECODE_CARRY: the cache is uploaded at the first step, then stays on
    the device. teacher: tokens fed instead of ours. Returns (tokens, step logits) lists."""
    tokens, step_logits, nxt = [], [], first
    for i in range(1, new_tokens):
        fed = teacher[:, i - 1] if teacher is not None else nxt
        feed = gpt2_decode_inputs(fed, P + i - 1, k_cache, v_cache) if i == 1 else gpt2_decode_inputs(fed, P + i - 1)
        logits, nxt = decode.run(["logits", "next_token"], feed)
        tokens.append(nxt)
        step_logits.append(logits)
    return tokens, step_logits


def gpt2_generate(prefill, decode, ids, new_tokens, teacher=None):
    """Greedy decode with tensorgl sessions: the prefill, then gpt2_decode. teacher: PyTorch's
    tokens, fed instead of ours so that every step's logits are comparable even if a near-tie
    flipped a token. Returns (tokens (B,new), step logits (new,B,V))."""
    logits, nxt, kc, vc = prefill.run(None, {"ids": ids})
    tokens, step_logits = gpt2_decode(decode, nxt, ids.shape[1], new_tokens, kc, vc, teacher)
    return np.stack([nxt] + tokens, axis=1), np.stack([logits] + step_logits)


def tensorgl_run_commands(directory, plugin="gles", output_dir="out"):
    """The tensorgl-run command lines (argument lists after the program) of an exported directory,
    with each run's expected outputs: [(args, {output: expected .npy path})]."""
    with open(os.path.join(directory, "meta.json")) as f:
        meta = json.load(f)
    cmds = []
    for r in meta["runs"]:
        args = [os.path.join(directory, r["model"]), "--plugin=" + plugin]
        for name, npy in r["inputs"].items():
            args += ["--input", "%s=%s" % (name, os.path.join(directory, npy))]
        args += ["--output-dir", os.path.join(output_dir, os.path.splitext(r["model"])[0])]
        cmds.append((args, {o: os.path.join(directory, e) for o, e in r["expected"].items()}))
    return cmds


def check(net, directory, plugin="gles", record_graph=False, log=print):
    """Runs the exported model(s) of `directory` with InferenceSession on `plugin` and compares with
    PyTorch's outputs. Returns {output: (max abs, max rel-to-max, ok)}."""
    from tensorgl.onnx import InferenceSession
    with open(os.path.join(directory, "meta.json")) as f:
        meta = json.load(f)
    tol = TOLERANCES[net]
    p = lambda n: os.path.join(directory, n)
    result = {}
    if net == "gpt2":
        new = meta["config"]["new"]
        with InferenceSession(p("prefill.onnx"), plugin=plugin, record_graph=record_graph) as pre, \
                InferenceSession(p("decode.onnx"), plugin=plugin, record_graph=record_graph, carry=GPT2_DECODE_CARRY) as dec:
            ids = np.load(p("input_ids.npy"))
            want_tokens, want_logits = np.load(p("expected_tokens.npy")), np.load(p("expected_step_logits.npy"))
            _, forced_logits = gpt2_generate(pre, dec, ids, new, teacher=want_tokens)
            tokens, _ = gpt2_generate(pre, dec, ids, new)
        d = max_diff(forced_logits, want_logits)
        result["step_logits"] = d + (within(forced_logits, want_logits, tol),)
        same = tokens == want_tokens
        ok = bool(same.all())
        if not ok:
            # Greedy decoding amplifies a near-tie: accept a different token only where PyTorch's
            # own top-2 margin at the first differing step is within our logits' difference.
            step = int(np.argmin(same.all(axis=0)))
            top2 = np.sort(want_logits[step], axis=-1)[:, -2:]
            margin = float(np.min(top2[:, 1] - top2[:, 0]))
            ok = margin <= 2 * result["step_logits"][0]
            log("%s on %s: tokens differ from step %d on; PyTorch's top-2 margin there %.3g (%s)" % (
                net, plugin, step, margin, "a near-tie" if ok else "NOT a near-tie"))
        result["tokens"] = (int(tokens.size - same.sum()), 0.0, ok)
        log("%s on %s: greedy tokens %d/%d equal to PyTorch's: %s" % (net, plugin, int(same.sum()), tokens.size, tokens[0].tolist()))
    else:
        with InferenceSession(p("model.onnx"), plugin=plugin, record_graph=record_graph) as s:
            feeds = {a.name: np.load(p("input_%s.npy" % a.name)) for a in s.get_inputs()}
            names = [o.name for o in s.get_outputs()]
            outs = s.run(None, feeds)
        for n, got in zip(names, outs):
            want = np.load(p("expected_%s.npy" % n))
            result[n] = max_diff(got, want) + (within(got, want, tol),)
    for n, (a, r, ok) in result.items():
        log("%s on %s: %-12s max abs diff %.3g  (%.3g of max|torch|)  %s" % (net, plugin, n, a, r, "ok" if ok else "OUT OF TOLERANCE"))
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="export NET with random weights and PyTorch's expected outputs")
    e.add_argument("net", choices=NETS)
    e.add_argument("--out", required=True)
    e.add_argument("--size", default="full", choices=("full", "small"))
    e.add_argument("--batch", type=int, default=1)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--config", action="append", default=[], metavar="KEY=N",
                   help="override a setting of the size's configuration (e.g. prompt=64 for gpt2)")
    c = sub.add_parser("check", help="run an exported NET on a plugin and compare with PyTorch")
    c.add_argument("net", choices=NETS)
    c.add_argument("--dir", required=True)
    c.add_argument("--plugin", default="gles")
    c.add_argument("--graph", action="store_true", help="record each model as an ABI 1.2 graph and replay it")
    a = ap.parse_args(argv)
    if a.cmd == "export":
        overrides = dict(kv.split("=", 1) for kv in a.config if "=" in kv)
        if len(overrides) != len(a.config):
            ap.error("--config: expected KEY=N, got %s" % a.config)
        meta = export(a.net, a.out, a.size, a.batch, a.seed, overrides=overrides)
        print("exported %s (%s, batch %d, seed %d) to %s: %s" % (a.net, a.size, a.batch, a.seed, a.out, ", ".join(meta["files"])))
        return 0
    res = check(a.net, a.dir, a.plugin, a.graph)
    return 0 if all(ok for _, _, ok in res.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
