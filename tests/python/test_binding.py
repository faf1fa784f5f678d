"""pytest: the package's ctypes layer against plugin_api.h and the plugins' catalogue, plugin and
device queries, errors, and the sample (samples/python/sample.py) through the package.

Environment:
  TENSORGL_LIB      path of libtensorgl (ctest sets it to the build's library); the plugins are
                    found next to it by the loader.
  TGL_TEST_PLUGINS  comma-separated plugin names to test (default "cpu,gles").
"""

import ctypes
import os
import re
import sys

import numpy as np
import pytest

import tensorgl as tg
from conftest import PLUGINS

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(_ROOT, "samples", "python"))
import sample  # noqa: E402


@pytest.fixture(scope="module", params=PLUGINS)
def plugin(request, lib):
    return lib.load_plugin(request.param)


@pytest.fixture
def dev(plugin):
    assert plugin.device_count() >= 1, "plugin %r reports no device" % plugin.name
    with tg.Device(plugin, 0) as d:
        yield d


# --- the binding agrees with the header and the catalogue ---------------------------------------

def _header():
    # plugin_api.h with ops.h (the op catalogue it includes) in its place.
    d = os.path.join(_ROOT, "plugin_api", "tensorgl")
    with open(os.path.join(d, "plugin_api.h")) as f, open(os.path.join(d, "ops.h")) as g:
        return re.sub(r'^#include "ops.h".*$', lambda m: g.read(), f.read(), count=1, flags=re.M)


def test_generated_from_this_header():
    import hashlib
    assert tg.abi.HEADER_SHA256 == hashlib.sha256(_header().encode()).hexdigest(), \
        "tensorgl/_abi.py was generated from another plugin_api.h: rebuild (ninja tensorgl_python)"


def test_ctypes_layouts_match_header_pins():
    # Every static assert of plugin_api.h (sizeof and offsetof) against the ctypes structs.
    assert len(tg.abi.PINS) >= 90
    assert tg.abi.layout_mismatches() == []
    # The pins the generator read are the header's, counted independently here.
    # (Pins against a published params size, TGL_X_PARAMS_SIZE_V1_n, are not layout pins.)
    lp64 = re.sub(r"^#elif UINTPTR_MAX == 0xFFFFFFFFu\n.*?^#endif", "", _header(), flags=re.S | re.M)
    assert len(tg.abi.PINS) == len(re.findall(r"^TGL_STATIC_ASSERT\((?:sizeof|offsetof)(?!.*_SIZE_V\d)", lp64, re.M))
    assert ctypes.sizeof(tg.abi.tgl_plugin_api) == 16 + 23 * 8  # v1.3: graph_replay_with appended


def test_constants_match_header():
    """Every enum value of the header, read by a regex independent of the generator."""
    enums = {m.group(1): int(m.group(2))
             for m in re.finditer(r"\b(TGL_[A-Z0-9_]+)\s*=\s*(\d+)(?=\s*(?:,|/\*|\n|\}))", _header())}
    assert len(enums) > 150
    for name, value in enums.items():
        assert getattr(tg.abi, name) == value, name
    statuses = {v: k for k, v in enums.items() if k == "TGL_OK" or k.startswith("TGL_ERROR_")}
    assert statuses == tg.abi.STATUS_NAMES
    assert tg.status_name(6) == "TGL_ERROR_SHAPE_MISMATCH"


def test_every_struct_of_the_header_is_bound():
    names = set(re.findall(r"typedef struct (tgl_[a-z0-9_]+) \{", _header()))
    assert len(names) >= 45 and names == set(tg.abi.STRUCTS)
    assert tg.SoftmaxParams is tg.abi.tgl_softmax_params


def test_catalogue_matches_plugin(plugin):
    """Op ids, names, operand counts and params sizes of the binding against query_op."""
    header_ops = {v for k, v in tg.abi.CONSTANTS.items() if k.startswith("TGL_OP_") and k not in ("TGL_OP_INVALID", "TGL_OP_ID_LIMIT")}
    assert {info["id"] for info in tg.abi.OPS.values()} == header_ops
    for name, info in tg.abi.OPS.items():
        caps = plugin.query_op(info["id"])
        assert caps["name"] == name
        assert caps["n_inputs"] == len(info["inputs"]) and caps["n_outputs"] == len(info["outputs"]), name
        assert caps["params_size"] == ctypes.sizeof(tg.abi.params_class(name)), name
        assert caps["supported"], "%s: %s is not supported" % (plugin.name, name)
        assert callable(getattr(tg.ops, name)) and name in getattr(tg.ops, name).__doc__


# --- plugins and devices ------------------------------------------------------------------------

def test_plugin_info(plugin):
    info = plugin.info()
    assert info["name"] == plugin.name and info["abi_major"] == 1
    assert info["negotiated_minor"] == min(info["abi_minor"], tg.abi.TGL_ABI_MINOR)
    assert os.path.basename(plugin.path) == "libtensorgl-%s.so" % plugin.name


def test_plugins_listed(lib):
    assert set(PLUGINS) <= {name for name, _ in tg.plugins()}


def test_device_info(dev):
    props = dev.properties()
    assert props.get("name")
    if dev.plugin.name == "gles":
        assert props.get("api.version", "").startswith("OpenGL ES"), props.get("api.version")


def test_sample_through_the_package(plugin):
    x, w, bias = sample.inputs()
    y, s = sample.run(plugin, x, w, bias)
    y_ref = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + bias, 0.0)
    assert (y_ref == 0).any() and (y_ref > 0).any()
    assert sample.agree(y, y_ref).all() and sample.agree(s, y_ref.sum(axis=1)).all()


# --- errors -------------------------------------------------------------------------------------

def test_error_names_op_status_and_message(dev):
    a, b = dev.tensor(np.zeros((4, 3), np.float32)), dev.tensor(np.zeros((4,), np.float32))
    with pytest.raises(tg.TensorGLError) as ei:
        tg.ops.add(a, b, y=dev.empty((4, 3)))
    e = ei.value
    assert e.op == "add" and e.function == "run_op"
    assert e.status == tg.abi.TGL_ERROR_SHAPE_MISMATCH and e.status_name == "TGL_ERROR_SHAPE_MISMATCH"
    assert "(4)" in e.message and "(4, 3)" in e.message, e.message
    assert str(e).startswith("run_op(add) failed: TGL_ERROR_SHAPE_MISMATCH: ")


def test_error_of_a_1_1_op_keeps_its_name(dev):
    x = dev.tensor(np.zeros((1, 3, 5, 5), np.float32))
    w = dev.tensor(np.zeros((4, 2, 3, 3), np.float32))  # 2 input channels for 3
    with pytest.raises(tg.TensorGLError) as ei:
        tg.conv2d(x, w)
    assert ei.value.op == "conv2d" and "conv2d" in str(ei.value)


def test_error_axis_and_dtype(dev):
    x = dev.tensor(np.zeros((4, 3), np.float32))
    with pytest.raises(tg.TensorGLError) as ei:
        tg.ops.sum(x, axes=[2], y=dev.empty((4,)))
    assert ei.value.status_name == "TGL_ERROR_AXIS_OUT_OF_RANGE" and "axes[0]" in ei.value.message
    with pytest.raises(tg.TensorGLError) as ei:
        x + dev.tensor(np.zeros((4, 3), np.int32))
    assert ei.value.status_name == "TGL_ERROR_DTYPE_MISMATCH"


def test_use_after_close_says_so(plugin):
    d = tg.Device(plugin, 0)
    t = d.tensor(np.ones(8, np.float32))
    d.close()
    for use in (t.numpy, lambda: tg.relu(t), lambda: d.tensor(np.ones(2, np.float32))):
        with pytest.raises(tg.TensorGLError) as ei:
            use()
        assert ei.value.status_name == "TGL_ERROR_STALE_HANDLE"
        assert "use after close" in ei.value.message, ei.value.message


def test_bad_keywords_and_dtypes_name_the_argument(dev):
    x = dev.tensor(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="unknown keyword 'axes'.*tgl_softmax_params has: axis, scale"):
        tg.ops.softmax(x, axes=1)
    with pytest.raises(TypeError, match="ops.conv2d does not infer its outputs"):
        tg.ops.conv2d(x, x)
    with pytest.raises(ValueError, match="'float64' has no tensorgl equivalent.*convert it to float32"):
        dev.tensor(np.ones(3))
    with pytest.raises(ValueError, match="a tensor of .* given to an op on"):
        with tg.Device("cpu") as other:
            tg.add(x, other.tensor(np.ones(3, np.float32)))


def test_unknown_op_and_plugin(plugin, lib):
    with pytest.raises(tg.TensorGLError) as ei:
        plugin.query_op(99999)
    assert ei.value.status_name == "TGL_ERROR_UNKNOWN_OP"
    with pytest.raises(tg.TensorGLError) as ei:
        lib.load_plugin("no-such-plugin-xyz")
    assert ei.value.status_name == "TGL_ERROR_PLUGIN_NOT_FOUND" and ei.value.message


def test_library_not_found_says_what_was_tried():
    with pytest.raises(OSError, match="TENSORGL_LIB"):
        tg.Library("/nonexistent/libtensorgl.so")


def test_ops_ask_for_the_outputs_they_cannot_infer(dev):
    x = dev.tensor(np.ones((2, 5), np.float32))
    with pytest.raises(TypeError, match=r"ops.topk does not infer its outputs \(values, indices\)"):
        tg.ops.topk(x, values=dev.empty((2, 2)), axis=1)  # indices missing
    with pytest.raises(TypeError, match="missing input"):
        tg.ops.add(x)
    y = tg.ops.add(x, x)  # elementwise: allocated
    assert y.shape == (2, 5) and y.numpy().tolist() == [[2.0] * 5] * 2


def test_generator_refuses_what_it_does_not_understand(tmp_path):
    """A header the generator cannot read fully stops the build instead of giving a partial binding."""
    sys.path.insert(0, os.path.join(_ROOT, "python"))
    try:
        import gen_abi
    finally:
        sys.path.pop(0)
    for rel in gen_abi.SOURCES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(open(os.path.join(_ROOT, rel)).read())
    header = tmp_path / gen_abi.SOURCES[1]  # ops.h: the params structs
    assert "TGL_OP_SOFTMAX" in gen_abi.generate(str(tmp_path))
    header.write_text(header.read_text().replace("    float scale;\n", "    long double scale;\n", 1))
    with pytest.raises(gen_abi.GenError, match="long double"):
        gen_abi.generate(str(tmp_path))
