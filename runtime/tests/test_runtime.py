"""tensorgl-run and the runtime on small models built here (nothing binary is kept in git).

Environment (set by ctest): TGL_RUN (the tensorgl-run binary), TGL_TEST_PLUGINS ("cpu,gles").
Random weights and inputs use a fresh seed, named in every failure message; TGL_TEST_SEED replays it.
"""
import os
import re
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

RUN = os.environ.get("TGL_RUN", "")
PLUGINS = [p for p in os.environ.get("TGL_TEST_PLUGINS", "cpu").split(",") if p]
SEED = int(os.environ.get("TGL_TEST_SEED", np.random.SeedSequence().entropy % (1 << 31)))


def run(*args, expect_rc=0):
    p = subprocess.run([RUN, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert p.returncode == expect_rc, "seed %d: tensorgl-run %s -> %d\nstdout:\n%s\nstderr:\n%s" % (
        SEED, " ".join(map(str, args)), p.returncode, p.stdout, p.stderr)
    return p


def torch_cnn(tmp_path):
    """A small CNN exported by PyTorch (static shapes, opset 13): returns (model, x, expected)."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(SEED)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(8)
            self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
            self.fc = torch.nn.Linear(8 * 4 * 4, 10)

        def forward(self, x):
            x = torch.relu(self.bn(self.conv1(x)))
            x = torch.nn.functional.max_pool2d(x, 2)
            x = torch.nn.functional.gelu(self.conv2(x)) + 0.5 * x[:, :, ::2, ::2]
            x = torch.nn.functional.adaptive_avg_pool2d(x, (4, 4))
            x = x.reshape(x.shape[0], -1)  # Shape -> Gather -> Concat -> Reshape in the export
            return torch.softmax(self.fc(x), dim=-1)

    net = Net().eval()
    with torch.no_grad():
        net.bn.running_mean.uniform_(-0.5, 0.5)
        net.bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        expected = net(x).numpy()
    path = tmp_path / "cnn.onnx"
    torch.onnx.export(net, x, str(path), opset_version=13, input_names=["x"], output_names=["probs"])
    np.save(tmp_path / "x.npy", x.numpy())
    return path, tmp_path / "x.npy", expected


@pytest.mark.parametrize("plugin", PLUGINS)
def test_torch_cnn_matches_pytorch(tmp_path, plugin):
    model, x, expected = torch_cnn(tmp_path)
    out = tmp_path / ("out_" + plugin)
    p = run(model, "--plugin=" + plugin, "--input", "x=%s" % x, "--output-dir", out, "--repeat=3")
    got = np.load(out / "probs.npy")
    assert got.dtype == np.float32 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg="seed %d" % SEED)
    assert "ran 3 time(s)" in p.stdout
    # The same plan recorded once as an ABI 1.2 graph and replayed.
    p = run(model, "--plugin=" + plugin, "--input", "x=%s" % x, "--output-dir", out, "--repeat=3", "--graph")
    assert "(graph replay)" in p.stdout
    np.testing.assert_allclose(np.load(out / "probs.npy"), expected, rtol=1e-4, atol=1e-5, err_msg="seed %d (graph)" % SEED)
    # Reshape is a view and Constants are data: no plugin op; every Conv is one.
    rows = profile_rows(run(model, "--plugin=" + plugin, "--input", "x=%s" % x, "--profile").stdout)
    assert rows["/Reshape"] == 0 and rows["/conv1/Conv"] == 1, rows


def profile_rows(stdout):
    """{node name: device ops} from tensorgl-run --profile."""
    return {m.group(1): int(m.group(3)) for m in re.finditer(r"^  (\S+)\s+(\S+)\s+(\d+)\s+[\d.]+\s+[\d.]+%$", stdout, re.M)}


@pytest.mark.parametrize("plugin", PLUGINS)
def test_shape_subgraph_is_folded_on_the_host(tmp_path, plugin):
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape: metadata, no plugin op."""
    rng = np.random.default_rng(SEED)
    w = rng.standard_normal((8, 6)).astype(np.float32)
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
             helper.make_node("Shape", ["h"], ["s"], name="shape"),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0, name="gather"),
             helper.make_node("Unsqueeze", ["n", "ax"], ["nu"], name="unsq"),
             helper.make_node("Concat", ["nu", "m1"], ["tgt"], axis=0, name="concat"),
             helper.make_node("Reshape", ["h", "tgt"], ["y"], name="reshape")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 12])],
                          [numpy_helper.from_array(w, "w"), i64("zero", 0), i64("ax", [0]), i64("m1", [-1])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(tmp_path / "m.onnx"))
    x = rng.standard_normal((4, 2, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    p = run(tmp_path / "m.onnx", "--plugin=" + plugin, "--input", "x=%s" % (tmp_path / "x.npy"), "--output-dir", tmp_path, "--profile")
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), (x @ w).reshape(4, 12), rtol=1e-5, atol=1e-5, err_msg="seed %d" % SEED)
    rows = profile_rows(p.stdout)
    assert rows == {"mm": 1, "shape": 0, "gather": 0, "unsq": 0, "concat": 0, "reshape": 0}, rows


@pytest.mark.parametrize("plugin", PLUGINS)
def test_where_and_transpose_of_shapes_are_folded(tmp_path, plugin):
    """torch.onnx's shape arithmetic before Expand and Pad: Where(Equal(t, -1), 1, t) and
    LessOrEqual/GreaterOrEqual over shapes, and a Transpose of a pads tensor, all on the host."""
    rng = np.random.default_rng(SEED)
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    nodes = [helper.make_node("Equal", ["t", "m1"], ["is_m1"], name="eq"),
             helper.make_node("Where", ["is_m1", "one", "t"], ["tgt"], name="where"),   # [-1, 3, 4] -> [1, 3, 4]
             helper.make_node("LessOrEqual", ["tgt", "three"], ["le"], name="le"),
             helper.make_node("GreaterOrEqual", ["tgt", "three"], ["ge"], name="ge"),
             helper.make_node("And", ["le", "ge"], ["eq3"], name="and"),
             helper.make_node("Where", ["eq3", "two", "tgt"], ["tgt2"], name="where2"),  # [1, 2, 4]
             helper.make_node("Expand", ["x", "tgt2"], ["e"], name="expand"),
             helper.make_node("Transpose", ["pads2"], ["pads_t"], perm=[1, 0], name="transpose"),
             helper.make_node("Reshape", ["pads_t", "m1"], ["pads"], name="reshape"),
             helper.make_node("Pad", ["e", "pads"], ["y"], name="pad")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 6])],
                          [i64("t", [-1, 3, 4]), i64("m1", [-1]), i64("one", [1]), i64("three", [3]), i64("two", [2]),
                           # [[begin, end] per axis] transposed into ONNX's [begins..., ends...]
                           i64("pads2", [[0, 0], [0, 1], [1, 1]])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(tmp_path / "m.onnx"))
    x = rng.standard_normal((1, 1, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    p = run(tmp_path / "m.onnx", "--plugin=" + plugin, "--input", "x=%s" % (tmp_path / "x.npy"), "--output-dir", tmp_path, "--profile")
    want = np.pad(np.broadcast_to(x, (1, 2, 4)), [(0, 0), (0, 1), (1, 1)])
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), want, err_msg="seed %d" % SEED)
    rows = profile_rows(p.stdout)
    assert all(rows[n] == 0 for n in ("eq", "where", "le", "ge", "and", "where2", "transpose", "reshape")), rows
    assert rows["expand"] >= 1 and rows["pad"] >= 1, rows


@pytest.mark.parametrize("plugin", PLUGINS)
def test_mod_of_shapes_is_folded(tmp_path, plugin):
    """Mod over shape values (torch 2's MultiheadAttention export checks embed_dim % num_heads) on
    the host, in both of ONNX's semantics: fmod=0 takes the divisor's sign, fmod=1 the dividend's."""
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    nodes = [helper.make_node("Mod", ["p", "q"], ["py"], name="mod"),
             helper.make_node("Mod", ["p", "q"], ["c"], fmod=1, name="fmod"),
             helper.make_node("Mul", ["x", "xs"], ["y"], name="mul")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("py", TensorProto.INT64, [4]),
                           helper.make_tensor_value_info("c", TensorProto.INT64, [4]),
                           helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
                          [i64("p", [7, -7, 7, -7]), i64("q", [3, 3, -3, -3]),
                           numpy_helper.from_array(np.array([2, 3], np.float32), "xs")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(tmp_path / "m.onnx"))
    np.save(tmp_path / "x.npy", np.array([1, 1], np.float32))
    p = run(tmp_path / "m.onnx", "--plugin=" + plugin, "--input", "x=%s" % (tmp_path / "x.npy"), "--output-dir", tmp_path, "--profile")
    np.testing.assert_array_equal(np.load(tmp_path / "py.npy"), np.mod([7, -7, 7, -7], [3, 3, -3, -3]))
    np.testing.assert_array_equal(np.load(tmp_path / "c.npy"), np.fmod([7, -7, 7, -7], [3, 3, -3, -3]))
    rows = profile_rows(p.stdout)
    assert rows["mod"] == 0 and rows["fmod"] == 0, rows


def test_reference_prints_differences(tmp_path):
    if "gles" not in PLUGINS:
        pytest.skip("needs the gles plugin")
    model, x, _ = torch_cnn(tmp_path)
    p = run(model, "--plugin=gles", "--reference=cpu", "--input", "x=%s" % x)
    m = re.search(r"probs\s+max abs diff (\S+)\s+max rel diff (\S+)", p.stdout)
    assert m, p.stdout
    assert float(m.group(1)) < 1e-5


def chain_model(path, n=6):
    """x -> tanh -> tanh ... : buffers of a chain are reused by liveness."""
    nodes, prev = [], "x"
    for i in range(n):
        nodes.append(helper.make_node("Tanh", [prev], ["t%d" % i]))
        prev = "t%d" % i
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [64, 64])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(path))


def test_buffers_reused_by_liveness(tmp_path):
    chain_model(tmp_path / "chain.onnx")
    p = run(tmp_path / "chain.onnx", "--plugin=cpu")
    m = re.search(r"activations peak ([\d.]+) KiB \(([\d.]+) KiB without reuse\)", p.stdout)
    assert m, p.stdout
    # 7 tensors of 16 KiB; alive at once: at most an op's input and output.
    assert float(m.group(1)) == 32.0 and float(m.group(2)) == 112.0


def raw_tensor(name, dims, raw):
    """A float TensorProto as a file could hold it (helper.make_tensor checks the byte count)."""
    t = TensorProto()
    t.name, t.data_type = name, TensorProto.FLOAT
    t.dims.extend(dims)
    if raw is not None:
        t.raw_data = raw
    return t


def save_single(path, node, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph([node], "g", inputs, outputs, list(inits))
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), str(path))


def test_unsupported_op_names_node_and_op(tmp_path):
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])]
    save_single(tmp_path / "m.onnx", helper.make_node("EyeLike", ["x"], ["y"], name="my_eyelike"), vi,
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    p = run(tmp_path / "m.onnx", "--plugin=cpu", expect_rc=1)
    assert "TGLRT_ERROR_UNSUPPORTED" in p.stderr and "node 'my_eyelike' (EyeLike)" in p.stderr, p.stderr


def test_unsupported_attribute_value_is_refused(tmp_path):
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])]
    save_single(tmp_path / "m.onnx", helper.make_node("Pad", ["x"], ["y"], pads=[0, 0, 0, 0], mode="wrap"), vi,
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 3])], opset=2)
    p = run(tmp_path / "m.onnx", "--plugin=cpu", expect_rc=1)
    assert "(Pad): mode 'wrap'" in p.stderr, p.stderr


def test_dynamic_shape_is_refused(tmp_path):
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])]
    save_single(tmp_path / "m.onnx", helper.make_node("Relu", ["x"], ["y"]), vi,
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])])
    p = run(tmp_path / "m.onnx", "--plugin=cpu", expect_rc=1)
    assert "dynamic dim 'batch'" in p.stderr, p.stderr


def test_initializer_byte_count_is_checked(tmp_path):
    w = raw_tensor("w", [2, 3], b"\0" * 20)  # 24 needed
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])]
    save_single(tmp_path / "m.onnx", helper.make_node("Add", ["x", "w"], ["y"]), vi,
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w])
    p = run(tmp_path / "m.onnx", "--plugin=cpu", expect_rc=1)
    assert "TGLRT_ERROR_INVALID_MODEL" in p.stderr and "holds 20 bytes, expected 24" in p.stderr, p.stderr
    # Claims of 8 GiB and 64 GiB with 4 bytes of data: refused before anything is allocated.
    for rows, msg in ((1 << 28, "holds 4 bytes, expected 8589934592"), (1 << 31, "claims 17179869184 elements")):
        big = raw_tensor("w", [rows, 8], b"\0" * 4)
        vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])]
        save_single(tmp_path / "big.onnx", helper.make_node("Add", ["x", "w"], ["y"]), vi,
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, 8])], [big])
        p = run(tmp_path / "big.onnx", "--plugin=cpu", expect_rc=1)
        assert "TGLRT_ERROR_INVALID_MODEL" in p.stderr and msg in p.stderr, p.stderr


def test_huge_shapes_are_refused(tmp_path):
    shape = numpy_helper.from_array(np.array([1 << 40, 1 << 40], dtype=np.int64), "shape")
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1])]
    save_single(tmp_path / "m.onnx", helper.make_node("Expand", ["x", "shape"], ["y"], name="expand"), vi,
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1 << 40, 1 << 40])], [shape])
    p = run(tmp_path / "m.onnx", "--plugin=cpu", expect_rc=1)
    assert "node 'expand' (Expand): output 'y' of shape (1099511627776, 1099511627776) has too many elements" in p.stderr, p.stderr


@pytest.mark.parametrize("location", ["../outside.bin", "/etc/passwd", "link.bin"])
def test_external_data_outside_model_dir_is_refused(tmp_path, location):
    d = tmp_path / "model"
    d.mkdir()
    (tmp_path / "outside.bin").write_bytes(b"\0" * 24)
    if location == "link.bin":
        os.symlink(tmp_path / "outside.bin", d / "link.bin")
    w = raw_tensor("w", [2, 3], None)
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", "24")):
        e = w.external_data.add()
        e.key, e.value = k, v
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])]
    save_single(d / "m.onnx", helper.make_node("Add", ["x", "w"], ["y"]), vi,
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w])
    p = run(d / "m.onnx", "--plugin=cpu", expect_rc=1)
    assert "TGLRT_ERROR_INVALID_MODEL" in p.stderr and "model's directory" in p.stderr, p.stderr


def test_external_data_inside_model_dir_loads(tmp_path):
    rng = np.random.default_rng(SEED)
    wv = rng.standard_normal((2, 3)).astype(np.float32)
    (tmp_path / "w.bin").write_bytes(b"\0" * 8 + wv.tobytes())
    w = raw_tensor("w", [2, 3], None)
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "w.bin"), ("offset", "8"), ("length", "24")):
        e = w.external_data.add()
        e.key, e.value = k, v
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])]
    save_single(tmp_path / "m.onnx", helper.make_node("Add", ["x", "w"], ["y"]), vi,
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w])
    x = rng.standard_normal((2, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    run(tmp_path / "m.onnx", "--plugin=cpu", "--input", "x=%s" % (tmp_path / "x.npy"), "--output-dir", tmp_path / "o")
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "y.npy"), x + wv)


def test_int64_inputs_are_range_checked(tmp_path):
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 2]), helper.make_tensor_value_info("i", TensorProto.INT64, [3])]
    save_single(tmp_path / "m.onnx", helper.make_node("Gather", ["x", "i"], ["y"], axis=0), vi,
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "ok.npy", np.array([4, -1, 0], dtype=np.int64))  # -1 wraps, as ONNX says
    np.save(tmp_path / "big.npy", np.array([0, 1 << 40, 0], dtype=np.int64))
    for plugin in PLUGINS:
        run(tmp_path / "m.onnx", "--plugin=" + plugin, "--input", "x=%s" % (tmp_path / "x.npy"), "--input",
            "i=%s" % (tmp_path / "ok.npy"), "--output-dir", tmp_path / plugin)
        np.testing.assert_array_equal(np.load(tmp_path / plugin / "y.npy"), x[[4, -1, 0]])
    p = run(tmp_path / "m.onnx", "--plugin=cpu", "--input", "x=%s" % (tmp_path / "x.npy"), "--input",
            "i=%s" % (tmp_path / "big.npy"), expect_rc=1)
    assert "TGLRT_ERROR_OUT_OF_RANGE" in p.stderr and "element 1 = 1099511627776" in p.stderr, p.stderr


def test_double_needs_the_f64_as_f32_option(tmp_path):
    c = np.array([0.1, 1e300, -2.5, 1 / 3], dtype=np.float64)
    vi = [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [4])]
    save_single(tmp_path / "m.onnx", helper.make_node("Add", ["x", "c"], ["y"]), vi,
                [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [4])], [numpy_helper.from_array(c, "c")])
    x = np.array([1e-3, 1.0, 2.5, 1e-45], dtype=np.float64)
    np.save(tmp_path / "x.npy", x)
    p = run(tmp_path / "m.onnx", "--plugin=cpu", "--input", "x=%s" % (tmp_path / "x.npy"), expect_rc=1)
    assert "TGLRT_ERROR_UNSUPPORTED" in p.stderr and "double" in p.stderr and "f64_as_f32" in p.stderr, p.stderr
    for plugin in PLUGINS:
        run(tmp_path / "m.onnx", "--plugin=" + plugin, "--f64-as-f32", "--input", "x=%s" % (tmp_path / "x.npy"),
            "--output-dir", tmp_path / plugin)
        y = np.load(tmp_path / plugin / "y.npy")
        assert y.dtype == np.float64
        # computed in f32: inputs and weights rounded to f32 (1e300 -> inf, 1e-45 -> the smallest
        # subnormal or 0 where the device flushes), the sum rounded to f32, widened back exactly
        want = (x.astype(np.float32) + c.astype(np.float32)).astype(np.float64)
        np.testing.assert_array_equal(y[[0, 1, 2]], want[[0, 1, 2]])
        assert abs(y[3] - 1 / 3) < 1e-7 and y[3] == np.float64(np.float32(y[3]))


def test_small_integer_types_are_held_in_int32(tmp_path):
    # uint16 and uint32 travel as int32: moved exactly, range-checked on the way in
    vi = [helper.make_tensor_value_info("a", TensorProto.UINT16, [2, 3]), helper.make_tensor_value_info("b", TensorProto.UINT32, [3])]
    outs = [helper.make_tensor_value_info("t", TensorProto.UINT16, [3, 2]), helper.make_tensor_value_info("c", TensorProto.UINT32, [6])]
    g = helper.make_graph([helper.make_node("Transpose", ["a"], ["t"]), helper.make_node("Concat", ["b", "b"], ["c"], axis=0)],
                          "g", vi, outs)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(tmp_path / "m.onnx"))
    a = np.array([[0, 1, 65535], [7, 40000, 2]], dtype=np.uint16)
    b = np.array([0, 2147483647, 5], dtype=np.uint32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    np.save(tmp_path / "big.npy", np.array([1, 2, 1 << 31], dtype=np.uint32))
    for plugin in PLUGINS:
        run(tmp_path / "m.onnx", "--plugin=" + plugin, "--input", "a=%s" % (tmp_path / "a.npy"), "--input",
            "b=%s" % (tmp_path / "b.npy"), "--output-dir", tmp_path / plugin)
        t, c = np.load(tmp_path / plugin / "t.npy"), np.load(tmp_path / plugin / "c.npy")
        assert t.dtype == np.uint16 and c.dtype == np.uint32
        np.testing.assert_array_equal(t, a.T)
        np.testing.assert_array_equal(c, np.concatenate([b, b]))
    p = run(tmp_path / "m.onnx", "--plugin=cpu", "--input", "a=%s" % (tmp_path / "a.npy"), "--input",
            "b=%s" % (tmp_path / "big.npy"), expect_rc=1)
    assert "TGLRT_ERROR_OUT_OF_RANGE" in p.stderr and "element 2 = 2147483648" in p.stderr, p.stderr


def test_arithmetic_that_can_leave_a_small_integer_type_is_refused(tmp_path):
    # uint16 held in int32: 1 - 2 would be -1, not uint16's 65535, so Sub is refused
    vi = [helper.make_tensor_value_info("a", TensorProto.UINT16, [3]), helper.make_tensor_value_info("b", TensorProto.UINT16, [3])]
    save_single(tmp_path / "m.onnx", helper.make_node("Sub", ["a", "b"], ["y"], name="sub16"), vi,
                [helper.make_tensor_value_info("y", TensorProto.UINT16, [3])], opset=14)
    p = run(tmp_path / "m.onnx", "--plugin=cpu", expect_rc=1)
    assert "TGLRT_ERROR_UNSUPPORTED" in p.stderr and "node 'sub16' (Sub)" in p.stderr and "uint16" in p.stderr, p.stderr


def test_npy_files_are_validated(tmp_path):
    chain_model(tmp_path / "m.onnx", 1)
    np.save(tmp_path / "good.npy", np.zeros((64, 64), np.float32))
    data = (tmp_path / "good.npy").read_bytes()
    (tmp_path / "short.npy").write_bytes(data[:-4])
    (tmp_path / "magic.npy").write_bytes(b"NOTNUMPY" + data[8:])
    np.save(tmp_path / "c64.npy", np.zeros((64, 64), np.complex64))
    np.save(tmp_path / "f64.npy", np.zeros((64, 64)))
    np.save(tmp_path / "shape.npy", np.zeros((64, 63), np.float32))
    cases = {"short.npy": "data bytes", "magic.npy": "not a .npy file", "c64.npy": "'<c8' is not supported",
             "f64.npy": "holds float64", "shape.npy": "expects float32 (64, 64)"}
    for f, msg in cases.items():
        p = run(tmp_path / "m.onnx", "--plugin=cpu", "--input", "x=%s" % (tmp_path / f), expect_rc=1)
        assert msg in p.stderr, (f, p.stderr)
    p = run(tmp_path / "m.onnx", "--plugin=cpu", "--input", "nope=%s" % (tmp_path / "good.npy"), expect_rc=1)
    assert "no input of that name" in p.stderr
    p = run(tmp_path / "m.onnx", "--plugin=cpu", "--repeat=0", expect_rc=2)
    assert "--repeat expects an integer" in p.stderr


def test_not_a_model_is_refused(tmp_path):
    (tmp_path / "junk.onnx").write_bytes(b"\x08\x07garbage" * 10)
    p = run(tmp_path / "junk.onnx", "--plugin=cpu", expect_rc=1)
    assert "TGLRT_ERROR_INVALID_MODEL" in p.stderr, p.stderr


@pytest.mark.parametrize("plugin", PLUGINS)
def test_float32_cumsum_and_logsumexp(tmp_path, plugin):
    """ONNX 1.12's node tests of CumSum and ReduceLogSumExp are all float64 (no f64 in the ABI):
    their float32 lowerings are checked here against numpy."""
    rng = np.random.default_rng(SEED)
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    nodes = [helper.make_node("CumSum", ["x", "axis"], ["c"], exclusive=1, reverse=1),
             helper.make_node("ReduceLogSumExp", ["x"], ["l"], axes=[0, 2], keepdims=0)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5])],
                          [helper.make_tensor_value_info("c", TensorProto.FLOAT, [3, 4, 5]),
                           helper.make_tensor_value_info("l", TensorProto.FLOAT, [4])], [i64("axis", 1)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), str(tmp_path / "m.onnx"))
    x = rng.standard_normal((3, 4, 5)).astype(np.float32) * 4
    np.save(tmp_path / "x.npy", x)
    run(tmp_path / "m.onnx", "--plugin=" + plugin, "--input", "x=%s" % (tmp_path / "x.npy"), "--output-dir", tmp_path)
    flipped = np.flip(x, 1)
    excl = np.flip(np.cumsum(flipped, 1) - flipped, 1)
    np.testing.assert_allclose(np.load(tmp_path / "c.npy"), excl, rtol=1e-5, atol=1e-5, err_msg="seed %d" % SEED)
    m = x.max(axis=(0, 2), keepdims=True)
    lse = (np.log(np.exp(x - m).sum(axis=(0, 2), keepdims=True)) + m).reshape(4)
    np.testing.assert_allclose(np.load(tmp_path / "l.npy"), lse, rtol=1e-5, atol=1e-5, err_msg="seed %d" % SEED)


def test_c_api_argument_errors(tmp_path):
    """The C API through ctypes: bad arguments get a status and a message, and lose nothing."""
    import ctypes
    import tensorgl._runtime as nt  # the package's binding (ctest puts <build>/python on PYTHONPATH)
    lib_path = os.environ.get("TGLRT_LIB", "")
    if not lib_path:
        pytest.skip("TGLRT_LIB is not set")
    rt = nt.Runtime(lib_path)
    lib = rt.lib
    assert lib.tglrt_device_open(b"cpu", 0, None) == 1  # out is NULL
    assert b"out is NULL" in lib.tglrt_last_error()
    dev = rt.open("cpu")
    chain_model(tmp_path / "m.onnx", 2)
    model = ctypes.c_void_p()
    assert lib.tglrt_model_load(dev, str(tmp_path / "nope.onnx").encode(), ctypes.byref(model)) == 2  # IO
    assert b"nope.onnx" in lib.tglrt_last_error() and not model.value
    assert lib.tglrt_model_load(dev, str(tmp_path / "m.onnx").encode(), ctypes.byref(model)) == 0
    x = np.ones((64, 64), np.float32)
    y = np.zeros((64, 64), np.float32)
    ip = (ctypes.c_void_p * 1)(x.ctypes.data)
    op = (ctypes.c_void_p * 1)(y.ctypes.data)
    good = (ctypes.c_uint64 * 1)(x.nbytes)
    short = (ctypes.c_uint64 * 1)(x.nbytes - 4)
    assert lib.tglrt_model_run(model, ip, short, 1, op, good, 1) == 1
    assert b"input 0 ('x'): 16380 bytes given, expected 16384" in lib.tglrt_last_error()
    assert lib.tglrt_model_run(model, ip, good, 2, op, good, 1) == 1
    assert b"n_inputs is 2, the model has 1 inputs" in lib.tglrt_last_error()
    assert not y.any()  # nothing ran
    assert lib.tglrt_device_close(dev) == 1  # a model is still alive
    assert b"not freed" in lib.tglrt_last_error()
    assert lib.tglrt_model_run(model, ip, good, 1, op, good, 1) == 0
    np.testing.assert_allclose(y, np.tanh(np.tanh(x)), rtol=1e-6)
    assert lib.tglrt_model_run(None, ip, good, 1, op, good, 1) == 1
    ti = nt.TensorInfo()
    assert lib.tglrt_model_input_info(model, 5, ctypes.byref(ti)) == 1
    assert b"input index 5 is out of range (the model has 1)" in lib.tglrt_last_error()
    lib.tglrt_model_free(model)
    assert lib.tglrt_device_close(dev) == 0


@pytest.mark.parametrize("plugin", PLUGINS)
def test_float16_model(tmp_path, plugin):
    """An f16 model (f16 is storage in the ABI: computed in f32, rounded at each op's store)."""
    rng = np.random.default_rng(SEED)
    w = rng.standard_normal((8, 4)).astype(np.float16)
    b = rng.standard_normal((4,)).astype(np.float16)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("Softmax", ["r"], ["y"], axis=-1)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [3, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [3, 4])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(tmp_path / "m.onnx"))
    x = rng.standard_normal((3, 8)).astype(np.float16)
    np.save(tmp_path / "x.npy", x)
    run(tmp_path / "m.onnx", "--plugin=" + plugin, "--input", "x=%s" % (tmp_path / "x.npy"), "--output-dir", tmp_path)
    got = np.load(tmp_path / "y.npy")
    h = np.maximum((x.astype(np.float32) @ w.astype(np.float32)).astype(np.float16).astype(np.float32) + b.astype(np.float32), 0)
    h = h.astype(np.float16).astype(np.float32)
    e = np.exp(h - h.max(-1, keepdims=True))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), e / e.sum(-1, keepdims=True), rtol=2e-3, atol=1e-3, err_msg="seed %d" % SEED)
