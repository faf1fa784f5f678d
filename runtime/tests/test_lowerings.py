"""Composite lowerings whose ONNX 1.12 node tests are float64 only or missing (Einsum, LpPool),
checked in float32 against numpy on every plugin of TGL_TEST_PLUGINS, and what stays refused.

Environment (set by ctest): PYTHONPATH=<build>/python, TENSORGL_LIB, TGL_TEST_PLUGINS. Random
inputs use a fresh seed named in failures; TGL_TEST_SEED replays it.
"""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper

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
