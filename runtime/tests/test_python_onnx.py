"""tensorgl.onnx (InferenceSession) and tensorgl.onnx.backend (onnx's Backend) on small models
built here, on every plugin of TGL_TEST_PLUGINS, against numpy.

Environment (set by ctest): PYTHONPATH=<build>/python, TENSORGL_LIB (the runtime is found next to
it), TGL_TEST_PLUGINS. Random inputs use a fresh seed named in failures; TGL_TEST_SEED replays it.
"""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import tensorgl
import tensorgl.onnx as tgo
from tensorgl.onnx import backend

PLUGINS = [p for p in os.environ.get("TGL_TEST_PLUGINS", "cpu").split(",") if p]
SEED = int(os.environ.get("TGL_TEST_SEED", np.random.SeedSequence().entropy % (1 << 31)))
DEVICE_OF = {"cpu": "CPU", "gles": "GLES"}


def mlp_model(rng):
    """y = softmax(relu(x @ W1 + b1) @ W2), plus a second output h = relu(...)."""
    w1 = rng.standard_normal((8, 16)).astype(np.float32)
    b1 = rng.standard_normal(16).astype(np.float32)
    w2 = rng.standard_normal((16, 4)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["xw"]), helper.make_node("Add", ["xw", "b1"], ["pre"]),
             helper.make_node("Relu", ["pre"], ["h"]), helper.make_node("MatMul", ["h", "w2"], ["logits"]),
             helper.make_node("Softmax", ["logits"], ["y"], axis=-1)]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, [3, 16])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])

    def reference(x):
        h = np.maximum(x @ w1 + b1, 0)
        logits = h @ w2
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True), h
    return model, reference


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("source", ["path", "bytes"])
def test_session_matches_numpy(plugin, source, tmp_path):
    rng = np.random.default_rng(SEED)
    model, reference = mlp_model(rng)
    if source == "path":
        arg = tmp_path / "mlp.onnx"
        arg.write_bytes(model.SerializeToString())
    else:
        arg = model.SerializeToString()
    with tgo.InferenceSession(arg, plugin=plugin) as sess:
        ins, outs = sess.get_inputs(), sess.get_outputs()
        assert [(a.name, a.shape, a.type) for a in ins] == [("x", [3, 8], "tensor(float)")]
        assert [(a.name, a.shape, a.type) for a in outs] == [("y", [3, 4], "tensor(float)"), ("h", [3, 16], "tensor(float)")]
        for _ in range(2):  # planned once, run many times
            x = rng.standard_normal((3, 8)).astype(np.float32)
            want_y, want_h = reference(x)
            y, h = sess.run(None, {"x": x})
            np.testing.assert_allclose(y, want_y, rtol=1e-4, atol=1e-5, err_msg="seed %d" % SEED)
            np.testing.assert_allclose(h, want_h, rtol=1e-4, atol=1e-4, err_msg="seed %d" % SEED)
            [h_only] = sess.run(["h"], {"x": x})
            np.testing.assert_array_equal(h_only, h)


def test_session_errors():
    rng = np.random.default_rng(SEED)
    model, _ = mlp_model(rng)
    plugin = PLUGINS[0]
    with pytest.raises(tensorgl.TensorGLError, match="TGLRT_ERROR_INVALID_MODEL"):
        tgo.InferenceSession(b"not a model", plugin=plugin)
    with pytest.raises(tensorgl.TensorGLError, match="tglrt_device_open.*no-such-plugin"):
        tgo.InferenceSession(model.SerializeToString(), plugin="no-such-plugin")
    with tgo.InferenceSession(model.SerializeToString(), plugin=plugin) as sess:
        with pytest.raises(tgo.OnnxRuntimeError, match=r"input 'x': expected float32 \[3, 8\].*got float64 \[3, 8\]"):
            sess.run(None, {"x": np.zeros((3, 8))})
        with pytest.raises(tgo.OnnxRuntimeError, match=r"input 'x': expected float32 \[3, 8\].*got float32 \[2, 8\]"):
            sess.run(None, {"x": np.zeros((2, 8), np.float32)})
        with pytest.raises(tgo.OnnxRuntimeError, match=r"unknown \['z'\] missing \['x'\]"):
            sess.run(None, {"z": np.zeros((3, 8), np.float32)})
        with pytest.raises(tgo.OnnxRuntimeError, match="output_names: no output 'nope'"):
            sess.run(["nope"], {"x": np.zeros((3, 8), np.float32)})
    # An op the runtime cannot run is refused at load, naming the node and op type.
    node = helper.make_node("Loop", ["n", "c"], ["o"], name="the_loop", body=helper.make_graph([], "b", [], []))
    bad = helper.make_model(helper.make_graph([node], "g", [helper.make_tensor_value_info("n", TensorProto.INT64, []),
                                                             helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                                              [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1])]))
    with pytest.raises(tgo.OnnxRuntimeError) as e:
        tgo.InferenceSession(bad.SerializeToString(), plugin=plugin)
    assert e.value.status_name in ("TGLRT_ERROR_UNSUPPORTED", "TGLRT_ERROR_INVALID_MODEL"), str(e.value)


@pytest.mark.parametrize("plugin", PLUGINS)
def test_backend_run_node(plugin):
    rng = np.random.default_rng(SEED)
    device = DEVICE_OF[plugin]
    assert backend.supports_device(device) and not backend.supports_device("CUDA")
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    [got] = backend.run_node(helper.make_node("Transpose", ["a"], ["t"], perm=[2, 0, 1]), [a], device=device)
    np.testing.assert_array_equal(got, a.transpose(2, 0, 1))
    # Reshape's shape is an input: the backend binds it at load (a shape parameter).
    [got] = backend.run_node(helper.make_node("Reshape", ["a", "s"], ["r"]), [a, np.array([4, -1], np.int64)], device=device)
    np.testing.assert_array_equal(got, a.reshape(4, -1))
    b = rng.standard_normal((4, 5)).astype(np.float32)
    [got] = backend.run_node(helper.make_node("Gemm", ["a", "b"], ["c"], alpha=0.5), [a[0], b], device=device)
    np.testing.assert_allclose(got, 0.5 * a[0] @ b, rtol=1e-5, atol=1e-5, err_msg="seed %d" % SEED)


@pytest.mark.parametrize("plugin", PLUGINS)
def test_backend_prepare_and_run_model(plugin):
    rng = np.random.default_rng(SEED)
    model, reference = mlp_model(rng)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    rep = backend.prepare(model, device=DEVICE_OF[plugin])
    y, h = rep.run([x])
    np.testing.assert_allclose(y, reference(x)[0], rtol=1e-4, atol=1e-5, err_msg="seed %d" % SEED)
    y2, _ = backend.run_model(model, {"x": x}, device=DEVICE_OF[plugin])
    np.testing.assert_allclose(y2, y, rtol=1e-6, atol=1e-7)


def test_runtime_found_next_to_libtensorgl():
    """The package finds libtensorgl_runtime in the directory of $TENSORGL_LIB (docs/python.md)."""
    from tensorgl._runtime import FILE_NAME, Runtime, default_runtime
    lib = os.environ.get("TENSORGL_LIB")
    if not lib:
        pytest.skip("TENSORGL_LIB is not set")
    assert default_runtime().path == os.path.join(os.path.dirname(lib), FILE_NAME)
    with pytest.raises(OSError, match="libtensorgl_runtime not found; tried the path given: /nonexistent/x.so"):
        Runtime("/nonexistent/x.so")


def test_session_record_graph_and_fixed_inputs(tmp_path):
    """record_graph replays the plan as an ABI 1.2 graph; fixed_inputs binds a shape parameter."""
    rng = np.random.default_rng(SEED)
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("Tanh", ["r"], ["y"])],
                              "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
                                    helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])
    path = tmp_path / "reshape.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    with tgo.InferenceSession(path, plugin=PLUGINS[-1], fixed_inputs={"shape": np.array([3, 4], np.int64)},
                              record_graph=True) as sess:
        assert [a.name for a in sess.get_inputs()] == ["x"]  # the bound input is a constant now
        x = rng.standard_normal((2, 6)).astype(np.float32)
        [y] = sess.run(["y"], {"x": x})
        np.testing.assert_allclose(y, np.tanh(x.reshape(3, 4)), rtol=1e-5, atol=1e-6, err_msg="seed %d" % SEED)


def accumulator_model():
    """state_out = state + x, y = state_out * 2: a recurrent state to carry on the device."""
    nodes = [helper.make_node("Add", ["state", "x"], ["state_out"]),
             helper.make_node("Mul", ["state_out", "two"], ["y"])]
    graph = helper.make_graph(
        nodes, "acc", [helper.make_tensor_value_info("state", TensorProto.FLOAT, [2, 3]),
                       helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("state_out", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(2, np.float32), "two")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("graph", [False, True])
def test_carry_keeps_state_on_device(plugin, graph, tmp_path):
    rng = np.random.default_rng(SEED)
    path = tmp_path / "acc.onnx"
    path.write_bytes(accumulator_model().SerializeToString())
    xs = rng.standard_normal((4, 2, 3)).astype(np.float32)
    s0 = rng.standard_normal((2, 3)).astype(np.float32)
    with tgo.InferenceSession(str(path), plugin=plugin, carry={"state_out": "state"}, record_graph=graph) as sess:
        # Before any run has carried a value, the state must be fed.
        with pytest.raises(tgo.OnnxRuntimeError, match="missing \\['state'\\]"):
            sess.run(None, {"x": xs[0]})
        [y] = sess.run(["y"], {"state": s0, "x": xs[0]})  # only y is downloaded
        want = s0 + xs[0]
        np.testing.assert_allclose(y, 2 * want, rtol=1e-6, err_msg="seed %d" % SEED)
        for x in xs[1:]:
            y, state = sess.run(None, {"x": x})  # the state stays on the device
            want = want + x
            np.testing.assert_allclose(state, want, rtol=1e-5, atol=1e-6, err_msg="seed %d" % SEED)
            np.testing.assert_allclose(y, 2 * want, rtol=1e-5, atol=1e-6, err_msg="seed %d" % SEED)
        # Feeding the input again replaces the carried value.
        [state] = sess.run(["state_out"], {"state": s0, "x": xs[0]})
        np.testing.assert_allclose(state, s0 + xs[0], rtol=1e-6, err_msg="seed %d" % SEED)


def test_carry_null_before_a_run_is_refused_by_the_c_api(tmp_path):
    """The C API itself (below the session's own check): NULL for a carried input before any run."""
    path = tmp_path / "acc.onnx"
    path.write_bytes(accumulator_model().SerializeToString())
    with tgo.InferenceSession(str(path), plugin=PLUGINS[0], carry={"state_out": "state"}) as sess:
        x = np.ones((2, 3), np.float32)
        outs = [np.empty((2, 3), np.float32), None]
        with pytest.raises(tgo.OnnxRuntimeError, match="may be NULL only once a run has carried a value"):
            sess._rt.run(sess._model, [None, x], outs)
        sess._rt.run(sess._model, [x, x], outs)  # carries 2x into state
        sess._rt.run(sess._model, [None, x], outs)
        np.testing.assert_array_equal(outs[0], np.full((2, 3), 6, np.float32))


@pytest.mark.parametrize("carry, message", [
    ({"nope": "state"}, "carry: the model has no output 'nope'"),
    ({"state_out": "nope"}, "carry: the model has no input 'nope'"),
    ({"y": "state", "state_out": "state"}, "carry: input 'state' is carried into twice"),
])
def test_carry_errors(carry, message, tmp_path):
    path = tmp_path / "acc.onnx"
    path.write_bytes(accumulator_model().SerializeToString())
    with pytest.raises(tgo.OnnxRuntimeError, match=message):
        tgo.InferenceSession(str(path), plugin=PLUGINS[0], carry=carry)
