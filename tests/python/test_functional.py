"""pytest: the torch-like functions of tensorgl (tensorgl.functional, also tensorgl.*) against
numpy references (float64) on every plugin under test, and the README's Python quick start."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorgl as tg
import tensorgl.functional as F
from conftest import PLUGINS, SEED_NOTE, assert_sums_close


@pytest.fixture(scope="module", params=PLUGINS)
def dev(request):
    with tg.Device(request.param) as d:
        yield d


def close(got, ref, rtol=1e-4, atol=1e-5):
    got = got.numpy() if isinstance(got, tg.Tensor) else got
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=rtol, atol=atol, err_msg=SEED_NOTE)


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


QUICK_START = '''
import numpy as np
import tensorgl as tg

with tg.Device("gles") as dev:                 # the first GLES device (Mesa's llvmpipe without a GPU)
    x = dev.tensor(np.random.rand(4, 8).astype(np.float32))
    w = dev.tensor(np.random.rand(16, 8).astype(np.float32))
    y = tg.softmax(tg.linear(x, w), dim=-1)    # like torch.nn.functional
    print(y.shape, y.dtype, y.numpy().sum(axis=-1))   # rows sum to 1
'''


@pytest.mark.skipif("gles" not in PLUGINS, reason="TGL_TEST_PLUGINS leaves out gles")
def test_quick_start_verbatim():
    r = subprocess.run([sys.executable, "-c", QUICK_START], capture_output=True, text=True, timeout=60,
                       env=os.environ)
    assert r.returncode == 0, r.stderr
    head, sums = r.stdout.split("[", 1)
    assert head.strip() == "(4, 16) float32"
    np.testing.assert_allclose([float(v) for v in sums.strip(" ]\n").split()], 1.0, rtol=1e-5)
    assert tg.functional.softmax is tg.softmax


def test_linear_softmax_layer_norm(dev, rng):
    x, w, b = f32(rng, 2, 3, 8), f32(rng, 5, 8), f32(rng, 5)
    xd = x.astype(np.float64)
    lin = xd @ w.T + b
    close(F.linear(dev.tensor(x), dev.tensor(w), dev.tensor(b)), lin)
    e = np.exp(lin - lin.max(-1, keepdims=True))
    close(F.softmax(dev.tensor(lin.astype(np.float32)), dim=-1), e / e.sum(-1, keepdims=True))
    close(F.log_softmax(dev.tensor(x), dim=1), xd - np.log(np.exp(xd).sum(1, keepdims=True)))
    g, bb = f32(rng, 3, 8), f32(rng, 3, 8)
    mu, var = xd.mean((-2, -1), keepdims=True), xd.var((-2, -1), keepdims=True)
    close(F.layer_norm(dev.tensor(x), (3, 8), dev.tensor(g), dev.tensor(bb), eps=1e-5),
          (xd - mu) / np.sqrt(var + 1e-5) * g + bb)
    close(F.rms_norm(dev.tensor(x), [8], eps=1e-6), xd / np.sqrt((xd ** 2).mean(-1, keepdims=True) + 1e-6))
    with pytest.raises(ValueError, match="normalized_shape"):
        F.layer_norm(dev.tensor(x), (4,))


def _conv2d_ref(x, w, b, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    co, cig, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, co, oh, ow))
    for g in range(groups):
        cos = slice(g * co // groups, (g + 1) * co // groups)
        xs = xp[:, g * cig:(g + 1) * cig]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dil[0]:i * dil[0] + stride[0] * oh:stride[0],
                           j * dil[1]:j * dil[1] + stride[1] * ow:stride[1]]
                y[:, cos] += np.einsum("nchw,oc->nohw", patch, w[cos, :, i, j])
    return y + (0 if b is None else b[None, :, None, None])


@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 2), ((1, 2), (2, 1), (2, 1), 1)])
def test_conv2d(dev, rng, stride, padding, dilation, groups):
    x, w, b = f32(rng, 2, 4, 7, 8), f32(rng, 6, 4 // groups, 3, 3), f32(rng, 6)
    two = lambda v: (v, v) if isinstance(v, int) else v  # noqa: E731
    ref = _conv2d_ref(x.astype(np.float64), w.astype(np.float64), b, two(stride), two(padding), two(dilation), groups)
    close(F.conv2d(dev.tensor(x), dev.tensor(w), dev.tensor(b), stride, padding, dilation, groups), ref, atol=1e-4)


def test_conv2d_same_and_transpose(dev, rng):
    x, w = f32(rng, 1, 2, 6, 5), f32(rng, 3, 2, 3, 2)
    y = F.conv2d(dev.tensor(x), dev.tensor(w), padding="same")
    assert y.shape == (1, 3, 6, 5)
    # conv_transpose2d is the adjoint of conv2d: <conv(x), v> == <x, conv_transpose(v)>
    wt = f32(rng, 3, 2, 3, 3)
    v = f32(rng, 1, 3, 2, 2)
    xin = f32(rng, 1, 2, 5, 5)
    # (the same weight: (C_out, C_in) for conv2d is (C_in, C_out) for its transpose)
    lhs_terms = F.conv2d(dev.tensor(xin), dev.tensor(wt), stride=2).numpy().astype(np.float64) * v
    ct = F.conv_transpose2d(dev.tensor(v), dev.tensor(wt), stride=2)
    assert ct.shape == (1, 2, 5, 5)
    rhs_terms = xin.astype(np.float64) * ct.numpy()
    # Both sides hold f32 sums of about 18 products each: their rounding is relative to the terms'
    # magnitudes, not to the inner product, which may cancel to near 0 (seed 1841384619: 0.0015
    # from terms near 1, the sides 8e-4 of it apart). Allowed: 1e-5 of the terms' sum (the worst of
    # 300 seeds on either plugin: 9e-8); a wrong adjoint is off by the terms' size.
    assert_sums_close(rhs_terms.sum(), lhs_terms.sum(), max(np.abs(lhs_terms).sum(), np.abs(rhs_terms).sum()), 1e-5)


def test_pooling_and_interpolate(dev, rng):
    x = f32(rng, 2, 3, 6, 7)
    xd = x.astype(np.float64)
    y, idx = F.max_pool2d(dev.tensor(x), 2, return_indices=True)
    win = xd[:, :, :6, :6].reshape(2, 3, 3, 2, 3, 2)
    close(y, win.max(axis=(3, 5)))
    flat = xd.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1).astype(np.int64), -1),
                                  win.max(axis=(3, 5)).reshape(2, 3, -1))
    close(F.avg_pool2d(dev.tensor(x), (2, 3), stride=(2, 3)), xd[:, :, :, :6].reshape(2, 3, 3, 2, 2, 3).mean((3, 5)))
    close(F.adaptive_avg_pool2d(dev.tensor(x), 1), xd.mean((2, 3), keepdims=True))
    up = F.interpolate(dev.tensor(x), scale_factor=2, mode="nearest")
    close(up, xd.repeat(2, axis=2).repeat(2, axis=3))
    bl = F.interpolate(dev.tensor(x), size=(6, 7), mode="bilinear", align_corners=True)
    close(bl, xd)  # same size, align_corners: the identity
    with pytest.raises(ValueError, match="bicubic"):
        F.interpolate(dev.tensor(x), size=(3, 3), mode="bicubic")


def _sdpa_ref(q, k, v, mask=None, causal=False, scale=None):
    s = (q @ np.swapaxes(k, -1, -2)) * (scale or 1 / math.sqrt(q.shape[-1]))
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def test_scaled_dot_product_attention(dev, rng):
    q, k, v = f32(rng, 2, 3, 4, 8), f32(rng, 2, 3, 6, 8), f32(rng, 2, 3, 6, 5)
    qd, kd, vd = (a.astype(np.float64) for a in (q, k, v))
    tq, tk, tv = dev.tensor(q), dev.tensor(k), dev.tensor(v)
    close(F.scaled_dot_product_attention(tq, tk, tv), _sdpa_ref(qd, kd, vd))
    close(F.scaled_dot_product_attention(tq, tk, tv, is_causal=True, scale=0.3),  # torch's top-left triangle
          _sdpa_ref(qd, kd, vd, causal=True, scale=0.3))
    kq = f32(rng, 2, 3, 4, 8)
    close(F.scaled_dot_product_attention(tq, dev.tensor(kq), tv[:, :, :4], is_causal=True),
          _sdpa_ref(qd, kq.astype(np.float64), vd[:, :, :4], causal=True))
    mask = rng.random((4, 6)) > 0.3
    mask[:, 0] = True
    close(F.scaled_dot_product_attention(tq, tk, tv, attn_mask=dev.tensor(mask)), _sdpa_ref(qd, kd, vd, mask))
    with pytest.raises(NotImplementedError, match="dropout"):
        F.scaled_dot_product_attention(tq, tk, tv, dropout_p=0.1)


def test_cross_entropy_embedding_gather(dev, rng):
    logits, target = f32(rng, 4, 6), np.array([1, 5, -100, 0])
    ld = logits.astype(np.float64)
    lse = np.log(np.exp(ld).sum(-1))
    per = lse - ld[np.arange(4), np.where(target < 0, 0, target)]
    close(F.cross_entropy(dev.tensor(logits), target, reduction="none"), np.where(target < 0, 0, per))
    close(F.cross_entropy(dev.tensor(logits), target), per[target >= 0].mean())
    w, ids = f32(rng, 10, 3), np.array([[1, 9], [0, 1]])
    close(F.embedding(dev.tensor(ids.astype(np.int32)), dev.tensor(w)), w[ids].astype(np.float64))
    x = f32(rng, 3, 5)
    idx = rng.integers(0, 5, (3, 2)).astype(np.int32)
    close(F.gather(dev.tensor(x), 1, idx), np.take_along_axis(x, idx, 1).astype(np.float64))
    values, indices = F.topk(dev.tensor(x), 2)
    close(values, -np.sort(-x, axis=-1)[:, :2].astype(np.float64))
    assert indices.dtype == np.int32


def test_reductions_and_layout(dev, rng):
    x = f32(rng, 3, 4, 5)
    xd = x.astype(np.float64)
    t = dev.tensor(x)
    close(F.sum(t, dim=(0, 2)), xd.sum((0, 2)))
    close(F.mean(t, dim=1, keepdim=True), xd.mean(1, keepdims=True))
    close(F.var(t, dim=-1), xd.var(-1, ddof=1))
    values, indices = F.max(t, dim=1)
    close(values, xd.max(1))
    np.testing.assert_array_equal(indices.numpy(), x.argmax(1))
    close(F.amax(t), xd.max())
    close(F.cumsum(t, dim=2), np.cumsum(xd, 2))
    close(F.cat([t] * 10, dim=1), np.concatenate([xd] * 10, 1))  # more than the ABI's 8 inputs
    close(F.stack([t, t], dim=1), np.stack([xd, xd], 1))
    close(F.pad(t, (1, 2, 0, 1), value=0.5), np.pad(xd, ((0, 0), (0, 1), (1, 2)), constant_values=0.5))
    close(F.pad(t, (1, 1), mode="reflect"), np.pad(xd, ((0, 0), (0, 0), (1, 1)), mode="reflect"))
    close(F.roll(t, 2, 1), np.roll(xd, 2, 1))
    close(F.flip(t, [0, 2]), xd[::-1, :, ::-1])
    close(F.where(t > 0, t, 0.0), np.where(xd > 0, xd, 0))
    parts = F.split(t, [1, 3], dim=1)
    assert [p._buffer is t._buffer for p in parts] == [True, True]  # views, as torch
    close(parts[1], xd[:, 1:])
    np.testing.assert_array_equal(F.arange(2, 11, 3, device=dev).numpy(), np.arange(2, 11, 3))
    close(F.eye(3, 4, device=dev), np.eye(3, 4))
    r = F.rand(1000, device=dev, seed=5).numpy()
    assert 0.0 <= r.min() and r.max() < 1.0 and abs(r.mean() - 0.5) < 0.05


def test_activations(dev, rng):
    x = 3 * f32(rng, 50)
    xd = x.astype(np.float64)
    t = dev.tensor(x)
    erf = np.vectorize(math.erf)
    close(F.gelu(t), 0.5 * xd * (1 + erf(xd / math.sqrt(2))))
    close(F.gelu(t, approximate="tanh"), 0.5 * xd * (1 + np.tanh(math.sqrt(2 / math.pi) * (xd + 0.044715 * xd ** 3))),
          atol=1e-4)
    close(F.leaky_relu(t, 0.2), np.where(xd >= 0, xd, 0.2 * xd))
    close(F.clamp(t, max=0.5), np.minimum(xd, 0.5))
    close(F.relu6(t), np.clip(xd, 0, 6))
    close(F.silu(t), xd / (1 + np.exp(-xd)))


def test_integer_arithmetic_takes_int_arrays(dev, rng):
    # int32 numpy arrays in, exact int32 out (numpy's wrap-around and // 0 = % 0 = 0); a Python
    # number becomes an int32 0-d tensor.
    a = rng.integers(-2**31, 2**31 - 1, size=(4, 6), endpoint=True).astype(np.int32)
    b = rng.integers(-5, 5, size=(6,), endpoint=True).astype(np.int32)
    t = dev.tensor(a)
    with np.errstate(all="ignore"):
        for fn, ref in ((F.add, np.add), (F.mul, np.multiply), (F.floor_divide, np.floor_divide),
                        (F.remainder, np.remainder), (F.fmod, np.fmod), (F.maximum, np.maximum)):
            got = fn(t, b).numpy()
            assert got.dtype == np.int32
            np.testing.assert_array_equal(got, ref(a, b), err_msg=fn.__name__ + SEED_NOTE)
        np.testing.assert_array_equal(F.floor_divide(t, 7).numpy(), a // np.int32(7), err_msg=SEED_NOTE)
    np.testing.assert_array_equal(F.sum(t, dim=1).numpy(), a.sum(1, dtype=np.int32), err_msg=SEED_NOTE)
    np.testing.assert_array_equal(F.cumsum(t, dim=0).numpy(), np.cumsum(a, 0, dtype=np.int32), err_msg=SEED_NOTE)
    np.testing.assert_array_equal(F.div(dev.tensor(np.array([7, -7], np.int32)), np.array([2, 2], np.int32)).numpy(),
                                  [3, -3], err_msg="div on integers truncates" + SEED_NOTE)
