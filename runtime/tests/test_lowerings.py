"""Composite lowerings whose ONNX 1.12 node tests are float64 only or missing (Einsum, LpPool),
checked in float32 against numpy on every plugin of TGL_TEST_PLUGINS, and what stays refused.

Environment (set by ctest): PYTHONPATH=<build>/python, TENSORGL_LIB, TGL_TEST_PLUGINS. Random
inputs use a fresh seed named in failures; TGL_TEST_SEED replays it.
"""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import tensorgl.onnx as tgo
from tensorgl._runtime import OnnxRuntimeError

PLUGINS = [p for p in os.environ.get("TGL_TEST_PLUGINS", "cpu").split(",") if p]
SEED = int(os.environ.get("TGL_TEST_SEED", np.random.SeedSequence().entropy % (1 << 31)))


def single_node_model(node, inputs, outputs, opset=13):
    """inputs/outputs: [(name, shape)] of float32 tensors."""
    vi = lambda specs: [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in specs]
    g = helper.make_graph([node], "g", vi(inputs), vi(outputs))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def run_model(plugin, model, feeds):
    with tgo.InferenceSession(model, plugin=plugin) as sess:
        return sess.run(None, feeds)


# (equation, operand shapes): ONNX 1.12's five Einsum cases (float64 there) and the general forms:
# implicit output, repeated labels (diagonal, trace), ellipsis with broadcasting, sum-out, outer
# product, three operands, upper-case labels.
EINSUM_CASES = [
    ("...ii ->...i", [(3, 5, 5)]),           # test_einsum_batch_diagonal
    ("bij, bjk -> bik", [(5, 2, 3), (5, 3, 4)]),  # test_einsum_batch_matmul
    ("i,i", [(5,), (5,)]),                   # test_einsum_inner_prod
    ("ij->i", [(3, 4)]),                     # test_einsum_sum
    ("ij->ji", [(3, 4)]),                    # test_einsum_transpose
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ii", [(4, 4)]),
    ("ji", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (1, 5, 4, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 5, 8)]),
    ("abc,cd,de->ae", [(2, 3, 4), (4, 5), (5, 6)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("Ab,bC->CA", [(2, 3), (3, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ijk->", [(2, 3, 4)]),
]


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("equation,shapes", EINSUM_CASES, ids=[c[0].replace(" ", "") for c in EINSUM_CASES])
def test_einsum_matches_numpy(plugin, equation, shapes):
    rng = np.random.default_rng(SEED)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    want = np.einsum(equation, *[x.astype(np.float64) for x in xs]).astype(np.float32)
    names = ["x%d" % i for i in range(len(xs))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    model = single_node_model(node, [(n, x.shape) for n, x in zip(names, xs)], [("y", want.shape)], opset=12)
    [got] = run_model(plugin, model, dict(zip(names, xs)))
    assert got.shape == want.shape, "seed %d" % SEED
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg="seed %d: %s" % (SEED, equation))


@pytest.mark.parametrize("equation,shapes,out,message", [
    ("ij,jk->ik", [(3, 4), (5, 6)], (3, 6), "label 'j' has sizes 4 and 5"),
    ("ij->k", [(3, 4)], (3,), "output label 'k' is in no operand"),
])
def test_einsum_bad_equation_is_named(equation, shapes, out, message):
    """Equations that pass ONNX 1.12's checker and shape inference (which catch bad characters and
    ranks first) are refused by the lowering, naming the equation and the fault."""
    names = ["x%d" % i for i in range(len(shapes))]
    model = single_node_model(helper.make_node("Einsum", names, ["y"], equation=equation),
                              list(zip(names, shapes)), [("y", out)], opset=12)
    with pytest.raises(OnnxRuntimeError) as e:
        tgo.InferenceSession(model, plugin="cpu")
    assert message in str(e.value) and equation in str(e.value), str(e.value)


def lp_pool_reference(x, kernel, strides, pads, p):
    """ONNX's LpPool: zero padding, (sum |x|^p)^(1/p) over each window (2-D)."""
    xp = np.pad(np.abs(x.astype(np.float64)) ** p, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - kernel[0]) // strides[0] + 1
    ow = (xp.shape[3] - kernel[1]) // strides[1] + 1
    y = np.empty(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * strides[0]:i * strides[0] + kernel[0], j * strides[1]:j * strides[1] + kernel[1]]
            y[:, :, i, j] = win.sum(axis=(2, 3))
    return (y ** (1.0 / p)).astype(np.float32)


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("p,kernel,strides,pads", [
    (2, [3, 3], [1, 1], [1, 1, 1, 1]),
    (1, [2, 3], [2, 1], [0, 0, 0, 0]),
    (3, [3, 2], [2, 2], [2, 0, 1, 1]),  # pads beyond half the kernel: an explicit zero pad
])
def test_lp_pool_matches_numpy(plugin, p, kernel, strides, pads):
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    want = lp_pool_reference(x, kernel, strides, pads, p)
    node = helper.make_node("LpPool", ["x"], ["y"], kernel_shape=kernel, strides=strides, pads=pads, p=p)
    [got] = run_model(plugin, single_node_model(node, [("x", x.shape)], [("y", want.shape)], opset=11), {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg="seed %d" % SEED)


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_lp_pool_matches_numpy(plugin, p):
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    want = (np.abs(x.astype(np.float64)) ** p).sum(axis=(2, 3), keepdims=True) ** (1.0 / p)
    node = helper.make_node("GlobalLpPool", ["x"], ["y"], p=p)
    [got] = run_model(plugin, single_node_model(node, [("x", x.shape)], [("y", want.shape)], opset=11), {"x": x})
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-4, atol=1e-5, err_msg="seed %d" % SEED)


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("storage_order", [0, 1])
def test_max_pool_indices_run_over_n_and_c(plugin, storage_order):
    """ONNX 1.12's two Indices cases have N = C = 1; here N = 2, C = 3 (the flat index counts the
    planes before), distinct values so that the maximum is unique."""
    rng = np.random.default_rng(SEED)
    x = rng.permutation(2 * 3 * 6 * 5).astype(np.float32).reshape(2, 3, 6, 5)
    vi = lambda n, t, s: helper.make_tensor_value_info(n, t, list(s))
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 1], storage_order=storage_order)
    g = helper.make_graph([node], "g", [vi("x", TensorProto.FLOAT, x.shape)],
                          [vi("y", TensorProto.FLOAT, (2, 3, 3, 4)), vi("i", TensorProto.INT64, (2, 3, 3, 4))])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)]).SerializeToString()
    y, idx = run_model(plugin, model, {"x": x})
    want_y = np.empty((2, 3, 3, 4), np.float32)
    want_i = np.empty((2, 3, 3, 4), np.int64)
    for n in range(2):
        for c in range(3):
            for i in range(3):
                for j in range(4):
                    win = x[n, c, 2 * i:2 * i + 2, j:j + 2]
                    h, w = np.unravel_index(np.argmax(win), win.shape)
                    h, w = h + 2 * i, w + j
                    want_y[n, c, i, j] = x[n, c, h, w]
                    spatial = w * 6 + h if storage_order else h * 5 + w
                    want_i[n, c, i, j] = (n * 3 + c) * 30 + spatial
    np.testing.assert_array_equal(y, want_y, err_msg="seed %d" % SEED)
    np.testing.assert_array_equal(idx, want_i, err_msg="seed %d" % SEED)


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("op,dtype", [("Add", np.uint8), ("Sub", np.uint8), ("Mul", np.uint8), ("Div", np.int8),
                                       ("Max", np.int8), ("Min", np.uint8), ("Mod", np.int8)])
def test_8bit_arithmetic_wraps_like_numpy(plugin, op, dtype):
    """8-bit arithmetic runs in f32 and wraps back: the full value range, overflow included."""
    rng = np.random.default_rng(SEED)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max + 1, (4, 5)).astype(dtype)
    b = rng.integers(info.min, info.max + 1, (5,)).astype(dtype)
    if op in ("Div", "Mod"):
        b[b == 0] = 3
    ref = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Max": np.maximum, "Min": np.minimum,
           "Mod": np.mod}.get(op)
    with np.errstate(over="ignore"):
        want = (np.trunc(a.astype(np.float64) / b).astype(np.int64).astype(dtype) if op == "Div" else ref(a, b).astype(dtype))
    onnx_type = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    vi = lambda n, s: helper.make_tensor_value_info(n, onnx_type, list(s))
    g = helper.make_graph([helper.make_node(op, ["a", "b"], ["y"])], "g", [vi("a", a.shape), vi("b", b.shape)], [vi("y", want.shape)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString()
    [got] = run_model(plugin, model, {"a": a, "b": b})
    np.testing.assert_array_equal(got, want, err_msg="seed %d: %s" % (SEED, op))


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("stride,pads,output_padding,dilation,group", [
    ([2, 1, 3], [1, 0, 2, 0, 1, 1], [1, 0, 1], [1, 1, 1], 1),
    ([1, 2, 2], [0, 1, 0, 0, 1, 0], [0, 0, 0], [2, 1, 1], 2),
])
def test_conv_transpose_3d_matches_torch(plugin, stride, pads, output_padding, dilation, group):
    """ConvTranspose over 3 spatial dims runs as conv3d on a zero-spread, padded input (ONNX 1.12's
    one 3-D case has stride 1 and no pads)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((2, 4, 3, 4, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3, 2, 3, 2)).astype(np.float32)
    b = rng.standard_normal(3 * group).astype(np.float32)
    # ONNX's pads are (begin..., end...); torch pads both sides alike, so crop the extra begin pad.
    tp = [min(pads[d], pads[d + 3]) for d in range(3)]
    want = torch.nn.functional.conv_transpose3d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride=stride,
                                                padding=tp, output_padding=output_padding, groups=group, dilation=dilation).numpy()
    want = want[:, :, pads[0] - tp[0]:want.shape[2] - (pads[3] - tp[0]),
                pads[1] - tp[1]:want.shape[3] - (pads[4] - tp[1]), pads[2] - tp[2]:want.shape[4] - (pads[5] - tp[2])]
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=stride, pads=pads, output_padding=output_padding,
                            dilations=dilation, group=group)
    model = single_node_model(node, [("x", x.shape), ("w", w.shape), ("b", b.shape)], [("y", want.shape)], opset=13)
    [got] = run_model(plugin, model, {"x": x, "w": w, "b": b})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg="seed %d" % SEED)


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("mode,ctm,extra", [
    ("cubic", "asymmetric", {}),
    ("linear", "align_corners", {}),
    ("nearest", "half_pixel", {"nearest_mode": "round_prefer_ceil"}),
    ("linear", "tf_crop_and_resize", {"extrapolation_value": 7.0}),
])
def test_resize_beyond_onnx_cases_matches_reference(plugin, mode, ctm, extra):
    """Resize over 3 spatial dims and the batch dim too (ONNX 1.12's cases resize 2 spatial dims),
    against ONNX's own reference implementation."""
    resize = pytest.importorskip("onnx.backend.test.case.node.resize")
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((2, 1, 2, 3, 4)).astype(np.float32)
    sizes = np.array([3, 1, 3, 2, 5], dtype=np.int64)  # the reference is slow: a few elements
    roi = np.array([0.2, 0, 0.1, 0.3, 0, 0.9, 1, 1.2, 0.8, 1], dtype=np.float32)
    coeffs = {"cubic": resize.cubic_coeffs, "linear": resize.linear_coeffs,
              "nearest": lambda r: resize.nearest_coeffs(r, mode=extra.get("nearest_mode", "round_prefer_floor"))}[mode]
    kwargs = {"coordinate_transformation_mode": ctm}
    if "extrapolation_value" in extra:
        kwargs["extrapolation_value"] = extra["extrapolation_value"]
    want = resize.interpolate_nd(x, coeffs, output_size=sizes, roi=roi if ctm == "tf_crop_and_resize" else None,
                                 **kwargs).astype(np.float32)
    node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode=mode, coordinate_transformation_mode=ctm, **extra)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(want.shape))],
                          [numpy_helper.from_array(roi, "roi"), numpy_helper.from_array(sizes, "sizes")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    [got] = run_model(plugin, model, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg="seed %d: %s %s" % (SEED, mode, ctm))


def bf16_bits(x):
    """float32 values as bfloat16 bits (uint16), rounded to nearest even (finite inputs)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (np.asarray(bits, np.uint32) << np.uint32(16)).view(np.float32)


@pytest.mark.parametrize("plugin", PLUGINS)
def test_bfloat16_tensors_compute(plugin):
    """BFLOAT16 graphs run (ABI 1.3: bf16 is a compute dtype): MatMul then Add then Relu, inputs and
    outputs as bf16 bits in uint16; each op rounds once to bf16, as a float64 reference rounded
    after each node (within one bf16 ulp where a value straddles a rounding boundary)."""
    rng = np.random.default_rng(SEED)
    a, b, c = (bf16_bits(rng.standard_normal(s)) for s in [(3, 5), (5, 4), (3, 4)])
    nodes = [helper.make_node("MatMul", ["a", "b"], ["m"]), helper.make_node("Add", ["m", "c"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    vi = lambda n, s: helper.make_tensor_value_info(n, TensorProto.BFLOAT16, list(s))
    g = helper.make_graph(nodes, "g", [vi("a", (3, 5)), vi("b", (5, 4)), vi("c", (3, 4))], [vi("y", (3, 4))])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString()
    [got] = run_model(plugin, model, {"a": a, "b": b, "c": c})
    assert got.dtype == np.uint16 and got.shape == (3, 4)
    m = bf16_values(bf16_bits(bf16_values(a).astype(np.float64) @ bf16_values(b).astype(np.float64)))
    want = np.maximum(bf16_values(bf16_bits(m.astype(np.float64) + bf16_values(c))), 0)
    np.testing.assert_allclose(bf16_values(got), want, rtol=2.0 ** -7, atol=2.0 ** -5, err_msg="seed %d" % SEED)
