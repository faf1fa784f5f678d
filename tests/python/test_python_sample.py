"""pytest: the ctypes binding (samples/python/tensorgl.py) against the CPU and the GLES plugin.

Environment:
  TENSORGL_LIB      path of libtensorgl (ctest sets it to the build's library); the plugins are
                    found next to it by the loader.
  TGL_TEST_PLUGINS  comma-separated plugin names to test (default "cpu,gles").

Every plugin named is expected to load and to have at least one device: a plugin that cannot be
loaded or has no device fails its tests (it is not skipped).
"""

import ctypes
import os

import numpy as np
import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))

import tensorgl as tg  # noqa: E402  (on sys.path through conftest.py)
import sample  # noqa: E402

PLUGINS = [p.strip() for p in os.environ.get("TGL_TEST_PLUGINS", "cpu,gles").split(",")
           if p.strip()]


@pytest.fixture(scope="module", params=PLUGINS)
def plugin(request, lib):
    p = lib.load_plugin(request.param)
    yield p
    p.release()


@pytest.fixture
def dev(plugin):
    n = plugin.device_count()
    assert n >= 1, "plugin %r reports %d devices" % (plugin.name, n)
    d = plugin.open_device(0)
    yield d
    d.close()


def rng(seed):
    return np.random.default_rng(seed)


def assert_close(got, ref, rtol, atol):
    """got (float32 from the device) against a float64 numpy reference."""
    assert got.shape == ref.shape, "shape %s, expected %s" % (got.shape, ref.shape)
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=rtol, atol=atol)


# --- ABI mirrors ------------------------------------------------------------------------------

def test_ctypes_layouts_match_header_pins():
    # The same numbers as the static asserts at the end of plugin_api.h (LP64).
    assert ctypes.sizeof(tg.Tensor) == 152
    assert tg.Tensor.strides.offset == 88
    assert ctypes.sizeof(tg.ReduceParams) == 48 and tg.ReduceParams.axes.offset == 12
    assert ctypes.sizeof(tg.MatmulParams) == 24 and tg.MatmulParams.beta.offset == 16
    assert ctypes.sizeof(tg.OpCaps) == 88 and tg.OpCaps.output_dtypes.offset == 72
    assert ctypes.sizeof(tg.PluginInfo) == 40 and tg.PluginInfo.name.offset == 16
    assert ctypes.sizeof(tg.Property) == 16
    assert ctypes.sizeof(tg.PluginApi) == 16 + 22 * 8  # v1.2: graph_begin/end/replay/destroy appended
    assert tg.PluginApi.timer_begin.offset == 16 + 16 * 8
    assert tg.PluginApi.graph_begin.offset == 16 + 18 * 8
    assert tg.PluginApi.graph_destroy.offset == 16 + 21 * 8
    assert tg.PluginApi.synchronize.offset == 16 + 15 * 8


def _header_enums():
    """NAME -> value of the enum entries (TGL_...) in plugin_api.h and ops.h (the op catalogue)."""
    import re
    text = ""
    for header in ("plugin_api.h", "ops.h"):
        with open(os.path.join(_HERE, "..", "..", "plugin_api", "tensorgl", header)) as f:
            text += f.read()
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"\b(TGL_[A-Z0-9_]+)\s*=\s*(\d+)(?=\s*(?:,|/\*|\n))", text)}


def test_constants_match_header():
    enums = _header_enums()
    statuses = {k: v for k, v in enums.items() if k == "TGL_OK" or k.startswith("TGL_ERROR_")}
    assert len(statuses) >= 27
    assert {v: k for k, v in statuses.items()} == tg.STATUS_NAMES
    assert enums["TGL_OP_ADD"] == 200 and enums["TGL_OP_CROSS_ENTROPY_BACKWARD"] == 1507
    for k, v in enums.items():
        if k.startswith("TGL_DTYPE_") and k != "TGL_DTYPE_COUNT_V1_0":
            assert getattr(tg, k[len("TGL_"):]) == v, k
        if k.startswith("TGL_OP_") and hasattr(tg, k[len("TGL_"):]):
            assert getattr(tg, k[len("TGL_"):]) == v, k


def test_status_names():
    assert tg.status_name(0) == "TGL_OK"
    assert tg.status_name(6) == "TGL_ERROR_SHAPE_MISMATCH"
    assert tg.status_name(32) == "TGL_ERROR_PLUGIN_NOT_FOUND"
    assert tg.TGL_ERROR_STALE_HANDLE == 4


# --- plugin and device information -------------------------------------------------------------

def test_plugin_info(plugin):
    info = plugin.info()
    assert info["name"] == plugin.name
    assert info["abi_major"] == 1
    assert info["negotiated_minor"] == min(info["abi_minor"], tg.ABI_MINOR)
    assert info["version"] and info["description"]
    assert os.path.isabs(plugin.path) and os.path.basename(plugin.path) == \
        "libtensorgl-%s.so" % plugin.name


def test_plugin_is_listed(lib, plugin):
    listed = dict(lib.list_plugins())
    assert plugin.name in listed


def test_device_info(plugin):
    n = plugin.device_count()
    assert n >= 1
    props = plugin.device_properties(0)
    assert props.get("name"), "device 0 has no 'name' property: %r" % props
    if "limit.max_rank" in props:
        assert int(props["limit.max_rank"]) >= 2
    if plugin.name == "gles":
        assert props.get("renderer")
        assert props.get("api.version", "").startswith("OpenGL ES"), props.get("api.version")
    # The loader's convenience lookup agrees with the table.
    got = plugin.library._lib.tgl_device_property(plugin._handle, 0, b"name")
    assert got.decode() == props["name"]


def test_device_properties_bad_index(plugin):
    with pytest.raises(tg.TensorGLError) as ei:
        plugin.device_properties(plugin.device_count() + 5)
    assert ei.value.status_name == "TGL_ERROR_DEVICE_UNAVAILABLE"
    assert ei.value.message


def test_query_op(plugin):
    caps = plugin.query_op(tg.OP_MATMUL)
    assert caps["name"] == "matmul" and caps["supported"]
    assert caps["n_inputs"] == 2 and caps["n_outputs"] == 1
    assert caps["params_size"] == ctypes.sizeof(tg.MatmulParams)
    assert caps["input_dtypes"][0] & tg.dtype_bit(tg.DTYPE_F32)
    caps = plugin.query_op(600)  # softmax: optional mask operand
    assert caps["name"] == "softmax" and caps["supported"]
    assert caps["n_inputs"] == 2 and caps["n_outputs"] == 1


# --- ops against numpy ------------------------------------------------------------------------

@pytest.mark.parametrize("shape_a,shape_b", [
    ((4, 3), (3,)),             # bias over rows
    ((2, 3, 4), (3, 1)),        # column broadcast in a batch
    ((5, 1, 6), (1, 7, 1)),     # both sides stretch
    ((3, 4), ()),               # scalar
])
def test_add_broadcast(dev, shape_a, shape_b):
    r = rng(1)
    a = r.standard_normal(shape_a).astype(np.float32)
    b = r.standard_normal(shape_b).astype(np.float32)
    y = dev.add(dev.from_numpy(a), dev.from_numpy(b)).numpy()
    ref = a.astype(np.float64) + b.astype(np.float64)
    assert_close(y, ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("m,k,n,ta,tb", [
    (4, 5, 3, False, False),
    (17, 33, 9, False, False),
    (8, 16, 12, True, False),
    (6, 10, 7, False, True),
])
def test_matmul(dev, m, k, n, ta, tb):
    r = rng(2)
    a = r.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = r.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    c = dev.matmul(dev.from_numpy(a), dev.from_numpy(b), transpose_a=ta, transpose_b=tb).numpy()
    a64 = a.astype(np.float64).T if ta else a.astype(np.float64)
    b64 = b.astype(np.float64).T if tb else b.astype(np.float64)
    # f32 accumulation over k terms on the GPU: error grows with k and the terms' magnitude.
    assert_close(c, a64 @ b64, rtol=1e-5, atol=1e-5 * k)


def test_matmul_batched_alpha_beta(dev):
    r = rng(3)
    a = r.standard_normal((2, 1, 4, 5)).astype(np.float32)
    b = r.standard_normal((3, 5, 6)).astype(np.float32)
    c0 = r.standard_normal((2, 3, 4, 6)).astype(np.float32)
    tc = dev.from_numpy(c0)
    dev.matmul(dev.from_numpy(a), dev.from_numpy(b), out=tc, alpha=0.5, beta=2.0)
    ref = 0.5 * (a.astype(np.float64) @ b.astype(np.float64)) + 2.0 * c0.astype(np.float64)
    assert_close(tc.numpy(), ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("shape,axes,keepdims", [
    ((4, 3), 1, False),
    ((4, 3), 0, True),
    ((2, 3, 5), (0, 2), False),
    ((3, 1000), -1, False),
    ((6, 7), None, False),     # every axis: rank-0 result
])
def test_sum(dev, shape, axes, keepdims):
    r = rng(4)
    x = r.standard_normal(shape).astype(np.float32)
    y = dev.sum(dev.from_numpy(x), axes=axes, keepdims=keepdims).numpy()
    ref = x.astype(np.float64).sum(axis=axes, keepdims=keepdims)
    ref = np.asarray(ref)
    count = x.size // max(ref.size, 1)
    assert_close(y, ref, rtol=1e-5, atol=1e-6 * count)


def test_sample_layer(plugin):
    x, w, bias = sample.inputs()
    y, s = sample.run(plugin, x, w, bias)
    y_ref = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + bias, 0.0)
    assert (y_ref == 0).any() and (y_ref > 0).any(), "inputs should exercise both relu branches"
    assert sample.agree(y, y_ref).all(), (y, y_ref)
    assert sample.agree(s, y_ref.sum(axis=1)).all(), (s, y_ref.sum(axis=1))


def test_strided_view_download(dev):
    # A transposed view described by strides, read back through DeviceTensor.numpy().
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = dev.from_numpy(x)
    desc = tg.Tensor.contiguous(t.buffer.handle, 0, tg.DTYPE_F32, (4, 3))
    desc.strides[0], desc.strides[1] = 1, 4
    view = tg.DeviceTensor(t.buffer, desc)
    np.testing.assert_array_equal(view.numpy(), x.T)
    # ...and used as an op input: relu(x.T - 5).
    five = dev.from_numpy(np.array(5.0, dtype=np.float32))
    y = dev.relu(dev.binary("sub", view, five)).numpy()
    np.testing.assert_array_equal(y, np.maximum(x.T - 5, 0))


# --- errors -----------------------------------------------------------------------------------

def test_error_shape_mismatch(dev):
    a = dev.from_numpy(np.zeros((4, 3), np.float32))
    b = dev.from_numpy(np.zeros((4,), np.float32))   # (4,) does not broadcast against (4, 3)
    out = dev.empty((4, 3))
    with pytest.raises(tg.TensorGLError) as ei:
        dev.run_op(tg.OP_ADD, [a, b], [out])
    e = ei.value
    assert e.status == tg.TGL_ERROR_SHAPE_MISMATCH
    assert e.status_name == "TGL_ERROR_SHAPE_MISMATCH"
    assert "(4)" in e.message and "(4, 3)" in e.message, e.message
    assert "TGL_ERROR_SHAPE_MISMATCH" in str(e)


def test_error_axis_out_of_range(dev):
    x = dev.from_numpy(np.zeros((4, 3), np.float32))
    with pytest.raises(tg.TensorGLError) as ei:
        dev.sum(x, axes=2, out=dev.empty((4,)))
    assert ei.value.status_name == "TGL_ERROR_AXIS_OUT_OF_RANGE"
    assert "axes[0]" in ei.value.message


def test_error_dtype_mismatch(dev):
    a = dev.from_numpy(np.zeros((2, 2), np.float32))
    b = dev.from_numpy(np.zeros((2, 2), np.int32))
    with pytest.raises(tg.TensorGLError) as ei:
        dev.run_op(tg.OP_ADD, [a, b], [dev.empty((2, 2))])
    assert ei.value.status_name == "TGL_ERROR_DTYPE_MISMATCH"


def test_error_stale_buffer(dev):
    t = dev.from_numpy(np.ones(8, np.float32))
    handle = t.buffer.handle
    t.buffer.free()
    stale = tg.Buffer(dev, handle, 32)
    with pytest.raises(tg.TensorGLError) as ei:
        stale.download(np.empty(8, np.float32))
    assert ei.value.status_name == "TGL_ERROR_STALE_HANDLE"
    with pytest.raises(tg.TensorGLError) as ei:
        stale.free()  # double free
    assert ei.value.status_name == "TGL_ERROR_STALE_HANDLE"


def test_error_unknown_op(plugin):
    with pytest.raises(tg.TensorGLError) as ei:
        plugin.query_op(99999)
    assert ei.value.status_name == "TGL_ERROR_UNKNOWN_OP"


def test_error_plugin_not_found(lib):
    with pytest.raises(tg.TensorGLError) as ei:
        lib.load_plugin("no-such-plugin-xyz")
    assert ei.value.status_name == "TGL_ERROR_PLUGIN_NOT_FOUND"
    assert ei.value.message
