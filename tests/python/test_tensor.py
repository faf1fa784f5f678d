"""pytest: tensorgl.Tensor and Device on every plugin under test: numpy protocol, views, operators,
DLPack, lifetimes (live bytes back to 0, finalizers after close and at exit), graphs."""

import ctypes
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorgl as tg
from conftest import PLUGINS, SEED, assert_sums_close


@pytest.fixture(scope="module", params=PLUGINS)
def dev(request):
    with tg.Device(request.param) as d:
        yield d


def test_numpy_protocol(dev, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    t = dev.tensor(a)
    assert t.dtype == np.float32 and t.shape == (3, 4) and t.ndim == 2 and t.size == 12
    assert t.strides == a.strides and t.stride() == (4, 1) and t.nbytes == a.nbytes
    np.testing.assert_array_equal(np.asarray(t), a)
    assert np.asarray(t).dtype == np.float32  # not a 0-d object array
    np.testing.assert_array_equal(t.numpy(), a)
    assert dev.tensor(a.astype(np.float16)).dtype == np.float16
    assert dev.tensor([1, 2, 3]).dtype == np.int32 and dev.tensor(2.5).dtype == np.float32
    assert dev.tensor(np.zeros((0, 3), np.float32)).numpy().shape == (0, 3)


def test_slicing_is_a_view_without_copy(dev, rng):
    a = rng.standard_normal((6, 8)).astype(np.float32)
    t = dev.tensor(a)
    before = dev.live_bytes
    for key in [(slice(1, 5), slice(None, None, 2)), (slice(None, None, -1),), (2,), (Ellipsis, 3),
                (None, slice(2, 4), slice(7, 0, -3)), (-1, slice(None))]:
        v = t[key]
        assert v._buffer is t._buffer  # the same device memory
        np.testing.assert_array_equal(v.numpy(), a[key], err_msg=str(key))
    assert dev.live_bytes == before
    v = t[1:5, ::2]
    assert v.strides == a[1:5, ::2].strides and v.stride() == (8, 2)
    # a view as an op input and as an output
    np.testing.assert_allclose(tg.relu(v).numpy(), np.maximum(a[1:5, ::2], 0))
    t[0, :] = 7.0
    t[1:3, 2:4] = dev.tensor(np.array([1.0, 2.0], np.float32))  # broadcast into the view
    ref = a.copy()
    ref[0, :] = 7.0
    ref[1:3, 2:4] = [1.0, 2.0]
    np.testing.assert_array_equal(t.numpy(), ref)
    np.testing.assert_array_equal(t.T.numpy(), ref.T)
    np.testing.assert_array_equal(t.T.contiguous().numpy(), ref.T)
    np.testing.assert_array_equal(t[:, 1:3].reshape(-1).numpy(), ref[:, 1:3].reshape(-1))
    np.testing.assert_array_equal(t[:1].expand(3, 8).numpy(), np.broadcast_to(ref[:1], (3, 8)))
    with pytest.raises(IndexError, match="out of bounds"):
        t[6]
    with pytest.raises(TypeError, match="index_select"):
        t[np.array([0, 1])]


def test_to_dtype(dev):
    a = np.array([-2.7, -0.5, 0.5, 1.5, 300.0], np.float32)
    t = dev.tensor(a)
    assert t.to(np.float32) is t
    np.testing.assert_array_equal(t.to(np.float16).numpy(), a.astype(np.float16))
    np.testing.assert_array_equal(t.to(np.int32).numpy(), a.astype(np.int32))
    np.testing.assert_array_equal(t.to(np.uint8).numpy(), [0, 0, 0, 1, 255])  # saturating, as the ABI says
    b = t.to(tg.bfloat16)
    assert b.dtype == "bfloat16"
    np.testing.assert_array_equal(b.numpy(), [-2.703125, -0.5, 0.5, 1.5, 300.0])


def bf16_bits_to_f32(bits):
    """bf16 bits (uint16) as the float32 of the same value: a bf16 is the top half of an f32."""
    return (np.asarray(bits, np.uint32) << np.uint32(16)).view(np.float32)


def test_bfloat16_bits_in_and_out(dev):
    # numpy has no bfloat16: bits go in as the exactly equal float32 cast on the device (exact, so
    # every pattern survives, NaN payloads aside), and come out through float32 (exact).
    bits = np.array([0x3F80, 0x3F81, 0xBF80, 0x0001, 0x7F7F, 0x7F80, 0xFF80, 0x8000], np.uint16)
    t = dev.tensor(bf16_bits_to_f32(bits)).to(tg.bfloat16)
    assert t.dtype == "bfloat16" and t.nbytes == 2 * bits.size
    back = t.numpy()
    assert back.dtype == np.float32
    np.testing.assert_array_equal((back.view(np.uint32) >> np.uint32(16)).astype(np.uint16), bits)
    # bf16 computes (rounded once to nearest even): 1 + 2^-8 ties to 1, 1 + 3 * 2^-8 to 1 + 2^-6.
    one = dev.tensor(np.ones(2, np.float32)).to(tg.bfloat16)
    eps = dev.tensor(np.array([2.0 ** -8, 3 * 2.0 ** -8], np.float32)).to(tg.bfloat16)
    np.testing.assert_array_equal((one + eps).numpy(), [1.0, 1.0 + 2.0 ** -6])


def test_mixed_weights_linear(dev, rng):
    # f32 activations with bf16 / f16 weights and bias: y f32, summed in f32 (not rounded to bf16).
    x = rng.standard_normal((3, 5)).astype(np.float32)
    w = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    for wdt in (tg.bfloat16, np.float16):
        wt, bt = dev.tensor(w).to(wdt), dev.tensor(b).to(wdt)
        wq, bq = wt.numpy().astype(np.float64), bt.numpy().astype(np.float64)  # the stored values
        y = tg.linear(dev.tensor(x), wt, bt)
        assert y.dtype == np.float32
        np.testing.assert_allclose(y.numpy(), x.astype(np.float64) @ wq.T + bq, rtol=1e-5, atol=1e-5)


def test_int64_and_int16_storage(dev, rng):
    # Values past 2^53 come back bit for bit; layout ops move both words; cast wraps and rounds as
    # plugin_api.h says; int64 numpy indices stay int64 and are checked on their whole value.
    a = np.array([[-2**63, 2**63 - 1, 2**53 + 1], [-1, 2**32 + 5, 0x123456789abcdef0]], np.int64)
    t = dev.tensor(a)
    assert t.dtype == np.int64
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(t.T.contiguous().numpy(), a.T)
    np.testing.assert_array_equal(t.to(np.int32).numpy(), a.astype(np.int32))  # the low 32 bits
    np.testing.assert_array_equal(t.to(np.float32).numpy(), a.astype(np.float32))
    np.testing.assert_array_equal(dev.tensor(np.array([1.5, -2.5, 1e30], np.float32)).to(np.int64).numpy(),
                                  [1, -2, 2**63 - 1])
    x = rng.standard_normal((4, 3)).astype(np.float32)
    idx = np.array([3, 0, 3], np.int64)
    np.testing.assert_array_equal(tg.index_select(dev.tensor(x), 0, idx).numpy(), x[idx])
    with pytest.raises(tg.TensorGLError, match="4294967297"):
        tg.index_select(dev.tensor(x), 0, np.array([2**32 + 1], np.int64)).numpy()
    h = np.array([-32768, 32767, -1], np.int16)
    np.testing.assert_array_equal(dev.tensor(h).to(np.float32).numpy(), h.astype(np.float32))
    np.testing.assert_array_equal(dev.tensor(h)[::-1].contiguous().numpy(), h[::-1])


def test_int64_arithmetic(dev):
    # Exact over all 64 bits and wrapping modulo 2^64, as numpy's int64 (GLES: two 32-bit words).
    a = np.array([2**32 - 1, 2**63 - 1, -2**63, 3037000500, -1, 2**32 + 5], np.int64)
    b = np.array([1, 1, -1, 3037000500, 2**32 - 1, 5], np.int64)
    ta, tb = dev.tensor(a), dev.tensor(b)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(tg.add(ta, tb).numpy(), a + b)
        np.testing.assert_array_equal(tg.sub(ta, tb).numpy(), a - b)
        np.testing.assert_array_equal(tg.mul(ta, tb).numpy(), a * b)
        np.testing.assert_array_equal(tg.sum(ta).numpy(), a.sum())
    np.testing.assert_array_equal(tg.lt(ta, tb).numpy(), a < b)
    np.testing.assert_array_equal(tg.maximum(ta, tb).numpy(), np.maximum(a, b))
    i = tg.argmax(dev.tensor(np.array([[1, 7, 7], [9, 0, 9]], np.float32)), dim=1, dtype=np.int64)
    assert i.dtype == np.int64
    np.testing.assert_array_equal(i.numpy(), [1, 0])


def test_operators(dev, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32) + 3.0
    m = rng.standard_normal((4, 5)).astype(np.float32)
    ta, tb, tm = dev.tensor(a), dev.tensor(b), dev.tensor(m)
    close = lambda got, ref: np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-5)  # noqa: E731
    close(ta + tb, a + b)
    close(ta - tb, a - b)
    close(ta * tb, a * b)
    close(ta / tb, a / b)
    close(2.0 - ta, 2.0 - a)
    close(1.0 / tb, 1.0 / b)
    close(a + tb, a + b)  # ndarray + Tensor -> Tensor
    close(-ta, -a)
    close(abs(ta), np.abs(a))
    close(ta @ tm, a @ m)
    close(ta @ tb, a @ b)  # matmul with a 1-D operand
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        got = getattr(ta, op)(tb)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got.numpy(), getattr(a, op)(b), err_msg=op)
    assert isinstance(ta + tb, tg.Tensor)


def test_dlpack_round_trip_with_numpy(dev, rng):
    a = rng.standard_normal((5, 3)).astype(np.float32)
    t = dev.tensor(a)
    assert t.__dlpack_device__() == (1, 0)  # kDLCPU: DLPack has no GL device, we export a host copy
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, a)
    t2 = tg.from_dlpack(a[:, 1], dev)  # a strided numpy producer
    np.testing.assert_array_equal(t2.numpy(), a[:, 1])
    t3 = tg.from_dlpack(t, dev)  # a tensorgl producer
    np.testing.assert_array_equal(t3.numpy(), a)
    with pytest.raises(BufferError, match="stream must be None"):
        t.__dlpack__(stream=1)


def test_live_bytes_return_to_zero(dev):
    """200 x relu(1 MiB) then del + gc: every device buffer freed (the issue's leak)."""
    gc.collect()
    start = dev.live_bytes
    x = np.ones(1 << 18, np.float32)  # 1 MiB
    for _ in range(200):
        y = tg.relu(dev.tensor(x))
    assert dev.live_bytes == start + x.nbytes  # only the last output: each input went with its last reference
    del y
    gc.collect()
    assert dev.live_bytes == start


def test_views_keep_their_buffer_alive(dev):
    gc.collect()
    start = dev.live_bytes
    v = dev.tensor(np.arange(16, dtype=np.float32))[4:8]
    gc.collect()
    assert dev.live_bytes == start + 64
    np.testing.assert_array_equal(v.numpy(), [4, 5, 6, 7])
    del v
    gc.collect()
    assert dev.live_bytes == start


def test_finalizers_after_close_and_at_exit():
    """Tensors outliving their device, and devices never closed, at interpreter exit: no error,
    no crash, exit status 0."""
    code = ("import gc, numpy as np, tensorgl as tg\n"
            "d = tg.Device(%r)\n"
            "t = d.tensor(np.ones(4, np.float32)); u = tg.relu(t)\n"
            "d.close(); del t; gc.collect()\n"
            "d2 = tg.Device(%r); keep = tg.exp(d2.tensor(np.ones(4, np.float32)))\n"
            "print('done', d2.live_bytes)\n" % (PLUGINS[0], PLUGINS[-1]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done 16" and "Exception ignored" not in r.stderr, r.stderr


def test_device_context_manager_closes():
    with tg.Device(PLUGINS[0]) as d:
        t = d.tensor(np.ones(3, np.float32))
        assert not d.closed
    assert d.closed and d.live_bytes == 0
    with pytest.raises(tg.TensorGLError, match="use after close"):
        t.numpy()


def test_graph_record_and_replay(dev, rng):
    a = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((6, 8)).astype(np.float32)
    x, tw = dev.tensor(a), dev.tensor(w)
    with dev.record() as g:
        y = tg.softmax(tg.linear(x, tw), dim=-1)
    ref = lambda a: np.exp(a @ w.T) / np.exp(a @ w.T).sum(-1, keepdims=True)  # noqa: E731
    g.replay()
    np.testing.assert_allclose(y.numpy(), ref(a), rtol=1e-5, atol=1e-6)
    # New data in the same buffer, replayed: the new result.
    a2 = a[::-1].copy()
    x[...] = dev.tensor(a2)
    g.replay()
    np.testing.assert_allclose(y.numpy(), ref(a2), rtol=1e-5, atol=1e-6)
    with pytest.raises(tg.TensorGLError) as ei:  # a recording inside a recording
        with dev.record():
            with dev.record():
                pass
    assert ei.value.function == "graph_begin" and ei.value.status_name == "TGL_ERROR_INVALID_ARGUMENT"


def test_graph_replay_with_bindings(dev, rng):
    # ABI 1.3: a decode-like step recorded once (h = leaky_relu(x * w), written into a KV-cache-like
    # tensor at a position, in place), replayed with another x, slope and position.
    cache0 = rng.standard_normal((8, 5)).astype(np.float32)
    w = rng.standard_normal(5).astype(np.float32)
    x1, x2 = (rng.standard_normal(5).astype(np.float32) for _ in range(2))
    cache, tw, tx1, tx2 = dev.tensor(cache0), dev.tensor(w), dev.tensor(x1), dev.tensor(x2)
    pos1, pos6 = dev.tensor(np.array([1], np.int32)), dev.tensor(np.array([6], np.int32))
    h = dev.empty((5,), np.float32)
    lp = tg.abi.tgl_leaky_relu_params(ctypes.sizeof(tg.abi.tgl_leaky_relu_params), 0.25)
    with dev.record() as g:
        tg.ops.mul(tx1, tw, y=h)                                     # op 0
        tg.ops.leaky_relu(h, y=h, params=lp)                        # op 1
        tg.functional.index_copy_(cache, 0, pos1, h.reshape(1, 5))  # op 2
    g.replay(tg.Graph.input(0, 0, tx2), tg.Graph.param(1, tg.abi.tgl_leaky_relu_params, "negative_slope", 0.5),
             tg.Graph.input(2, 1, pos6))
    v = x2 * w
    want = cache0.copy()
    want[6] = np.where(v >= 0, v, np.float32(0.5) * v)
    np.testing.assert_array_equal(cache.numpy(), want)
    with pytest.raises(tg.TensorGLError) as ei:  # op 5 does not exist: nothing queued
        g.replay(tg.Graph.input(5, 0, tx2))
    assert ei.value.function == "graph_replay_with" and "op_index" in str(ei.value)
    np.testing.assert_array_equal(cache.numpy(), want)
    g.replay()  # as recorded: row 1 from x1 with slope 0.25
    v = x1 * w
    want[1] = np.where(v >= 0, v, np.float32(0.25) * v)
    np.testing.assert_array_equal(cache.numpy(), want)


def test_index_copy(dev, rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    src = rng.standard_normal((4, 3)).astype(np.float32)
    t = dev.tensor(x)
    y = tg.functional.index_copy(t, 1, np.array([5, 0, 5]), dev.tensor(src))
    want = x.copy()
    want[:, 0] = src[:, 1]
    want[:, 5] = src[:, 2]  # the last duplicate wins
    np.testing.assert_array_equal(y.numpy(), want)
    np.testing.assert_array_equal(t.numpy(), x)
    assert tg.functional.index_copy_(t, 1, np.array([5, 0, 5]), dev.tensor(src)) is t
    np.testing.assert_array_equal(t.numpy(), want)


def test_seed_is_reported():
    assert SEED >= 0


def test_tensor_methods_mirror_the_functions(dev, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    t = dev.tensor(a)
    # A row of 4 normals may sum to near 0: its rounding is relative to the terms (rtol alone failed
    # 12 seeds in 3,000 on the CPU plugin).
    assert_sums_close(t.sum(dim=1).numpy(), a.astype(np.float64).sum(1), np.abs(a).sum(1), 1e-6)
    np.testing.assert_allclose(t.softmax(-1).numpy().sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(t.argmax(dim=0).numpy(), a.argmax(0))
    np.testing.assert_allclose(t.exp().numpy(), np.exp(a), rtol=1e-5)


@pytest.mark.skipif("san.so" in os.environ.get("LD_PRELOAD", ""),
                    reason="under a preloaded sanitizer torch's own allocations at exit are reported as leaks")
def test_dlpack_with_torch_when_installed(dev):
    torch = pytest.importorskip("torch")  # not a tensorgl dependency; Debian's python3-torch if present
    t = dev.tensor(torch.arange(6, dtype=torch.float32).reshape(2, 3))
    np.testing.assert_array_equal(t.numpy(), np.arange(6).reshape(2, 3))
    back = torch.from_dlpack(t * 2.0)
    assert back.dtype == torch.float32 and back.tolist() == [[0, 2, 4], [6, 8, 10]]


def test_gguf_blocks_from_raw_bytes(dev):
    """Device.blocks: a q8_0 tensor from the bytes a GGUF file holds, decoded by dequantize and
    gathered by index_select (embedding rows); a byte count that does not match the shape is
    refused before anything is allocated."""
    # Two rows of K = 40: two blocks each (the second's last 24 elements unused). Block b of row r:
    # d = r + 1 (f16), q[j] = j - 16, so x[r, k] = (r + 1) * (k % 32 - 16).
    raw = np.zeros((4, 34), np.uint8)
    for b in range(4):
        raw[b, :2] = np.frombuffer(np.float16(b // 2 + 1).tobytes(), np.uint8)
        raw[b, 2:] = (np.arange(32) - 16).astype(np.int8).view(np.uint8)
    t = dev.blocks(raw, "q8_0", (2, 40))
    y = dev.empty((2, 40), np.float32)
    tg.ops.dequantize(t, out=y)
    want = np.array([[(r + 1) * (k % 32 - 16) for k in range(40)] for r in range(2)], np.float32)
    np.testing.assert_array_equal(y.numpy(), want)
    rows = dev.empty((3, 40), np.float16)
    tg.ops.index_select(t, dev.tensor(np.array([1, 0, 1], np.int32)), out=rows, axis=0)
    np.testing.assert_array_equal(rows.numpy(), want[[1, 0, 1]].astype(np.float16))
    with pytest.raises(ValueError, match="needs 136 bytes"):
        dev.blocks(raw[:3], "q8_0", (2, 40))
    with pytest.raises(ValueError, match="not a block dtype"):
        dev.blocks(raw, "q3_K", (2, 40))
