"""pytest: every op of the catalogue called by its ABI name with keyword params
(tensorgl.ops.<name>(..., field=value)), on every plugin under test, each plugin's result checked
against the CPU plugin's (the reference). CASES must name every op of tensorgl.abi.OPS: an op added
to the header without a case here fails test_every_op_has_a_case.
"""

import numpy as np
import pytest

import tensorgl as tg
from conftest import PLUGINS, SEED, SEED_NOTE


def F(*shape):
    return ("f", shape)


def I(*values):  # noqa: E743  (an int32 index operand)
    return np.array(values, np.int32)


def O(*shape, dtype=np.float32):  # noqa: E743  (an output of this shape)
    return (tuple(shape), dtype)


_BOOL = np.bool_
_UNARY_KW = {"gelu": dict(approximate=1), "leaky_relu": dict(negative_slope=0.1), "elu": dict(alpha=0.5),
             "celu": dict(alpha=2.0), "softplus": dict(beta=2.0, threshold=5.0), "clamp": dict(min=-0.5, max=0.5)}
_POOL = dict(kernel=[2, 2], stride=[2, 2], dilation=[1, 1])
_CONV = dict(stride=[1, 1, 1], dilation=[1, 1, 1], groups=1)
_ROPE = dict(mode=0, n_rot=0, theta_base=10000.0, factor=1.0, attn_factor=1.0)

# op: (inputs, outputs, keyword params). Inputs: F(shape) random floats, numpy arrays as given,
# None absent; outputs: O(shape, dtype), None absent.
CASES = {}
for _op in tg.abi.OPS:
    info = tg.abi.OPS[_op]
    if info["family"] == "Unary":
        CASES[_op] = ([F(2, 3)], [O(2, 3, dtype={"cast": np.int32, "logical_not": _BOOL}.get(_op, np.float32))],
                      _UNARY_KW.get(_op, {}))
    elif info["family"] == "Binary":
        pred = _op in ("eq", "ne", "lt", "le", "gt", "ge") or _op.startswith("logical_")
        CASES[_op] = ([F(2, 3), F(3)], [O(2, 3, dtype=_BOOL if pred else np.float32)], {})
    elif info["family"] == "Reduce":
        kw = {"var": dict(correction=1.0), "std": dict(correction=0.0), "norm": dict(ord=1.0)}.get(_op, {})
        CASES[_op] = ([F(2, 5)], [O(2, dtype=_BOOL if _op in ("any", "all") else np.float32)],
                      dict(axes=[1], keepdims=0, **kw))
CASES.update({
    "where": ([np.array([[True, False, True]]), F(2, 3), F(2, 1)], [O(2, 3)], {}),
    "add_n": ([F(2, 3), F(3), F(2, 1)], [O(2, 3)], {}),
    "argmax": ([F(2, 5)], [O(2, dtype=np.int32)], dict(axis=1, keepdims=0)),
    "argmin": ([F(2, 5)], [O(2, 1, dtype=np.int32)], dict(axis=-1, keepdims=1)),
    "cumsum": ([F(2, 5)], [O(2, 5)], dict(axis=1, exclusive=1)),
    "cumprod": ([F(2, 5)], [O(2, 5)], dict(axis=0, reverse=1)),
    "matmul": ([F(2, 3), F(4, 3)], [O(2, 4)], dict(transpose_b=1, alpha=2.0, beta=0.0)),
    "linear": ([F(2, 3), F(4, 3), F(4)], [O(2, 4)], dict(activation=tg.abi.TGL_ACTIVATION_RELU)),
    "linear_qkv": ([F(2, 3), F(6, 3), None], [O(2, 2), O(2, 3), O(2, 1)], dict(activation=0)),
    "grouped_linear": ([F(3, 3), F(2, 4, 3), I(1, 0, 1), F(2, 4)], [O(3, 4)], dict(activation=4)),
    "linear_int8": ([F(2, 3), np.array([[1, -2, 3], [4, 5, -6]], np.int8), F(2), None], [O(2, 2)], {}),
    "linear_int4": ([F(2, 32), np.arange(64, dtype=np.uint8).reshape(4, 16), F(4, 1), None, None], [O(2, 4)],
                    dict(group_size=32)),
    "dequantize": ([("q8_0", (2, 32))], [O(2, 32)], {}),
    "softmax": ([F(2, 3), None], [O(2, 3)], dict(axis=-1, scale=0.5)),
    "log_softmax": ([F(2, 3), F(3)], [O(2, 3)], dict(axis=1, scale=1.0)),
    "layer_norm": ([F(2, 3), F(3), F(3)], [O(2, 3)], dict(n_norm_dims=1, eps=1e-5)),
    "rms_norm": ([F(2, 3), F(3)], [O(2, 3)], dict(n_norm_dims=1, eps=1e-6)),
    "group_norm": ([F(2, 4, 3), F(4), None], [O(2, 4, 3)], dict(num_groups=2, eps=1e-5)),
    "batch_norm": ([F(2, 3, 2), F(3), np.array([0.5, 1.0, 2.0], np.float32), None, F(3)], [O(2, 3, 2)],
                   dict(eps=1e-3)),
    "add_layer_norm": ([F(2, 3), F(2, 3), F(3), None], [O(2, 3), O(2, 3)], dict(n_norm_dims=1, eps=1e-5)),
    "add_rms_norm": ([F(2, 3), F(2, 3), None], [O(2, 3), None], dict(n_norm_dims=1, eps=1e-5)),
    "contiguous": ([F(2, 3)], [O(2, 3)], {}),
    "reshape": ([F(2, 3)], [O(3, 2)], {}),
    "permute": ([F(2, 3)], [O(3, 2)], dict(perm=[1, 0])),
    "slice": ([F(2, 5)], [O(2, 2)], dict(axis=1, start=4, stop=0, step=-2)),
    "narrow": ([F(2, 5)], [O(2, 3)], dict(axis=1, start=-3, length=3)),
    "expand": ([F(1, 3)], [O(2, 2, 3)], {}),
    "flip": ([F(2, 3)], [O(2, 3)], dict(axes=[0, 1])),
    "concat": ([F(2, 3), F(1, 3)], [O(3, 3)], dict(axis=0)),
    "split": ([F(4, 3)], [O(1, 3), O(3, 3)], dict(axis=0)),
    "stack": ([F(2, 3), F(2, 3)], [O(2, 3, 2)], dict(axis=-1)),
    "pad": ([F(2, 3)], [O(3, 4)], dict(mode=tg.abi.TGL_PAD_CONSTANT, value=1.5, before=[1, 0], after=[0, 1])),
    "tile": ([F(2, 3)], [O(4, 6)], {}),
    "roll": ([F(2, 3)], [O(2, 3)], dict(axes=[1], shifts=[-1])),
    "gather": ([F(2, 3), I([2, 0], [1, 1])], [O(2, 2)], dict(axis=1)),
    "index_select": ([F(2, 3), I(1, 0, 1)], [O(3, 3)], dict(axis=0)),
    "scatter": ([F(2, 3), I([2, 0]), F(1, 2)], [O(2, 3)], dict(axis=1)),
    "scatter_add": ([F(2, 3), I([2, 2]), F(1, 2)], [O(2, 3)], dict(axis=1)),
    "one_hot": ([I(0, 3, 1)], [O(3, 4)], {}),
    "set_rows": ([F(4, 3), I(2, 0), F(2, 3)], [O(4, 3)], dict(axis=0)),
    "topk": ([F(2, 5)], [O(2, 2), O(2, 2, dtype=np.int32)], dict(axis=1, descending=1)),
    "sort": ([F(2, 5)], [O(2, 5), O(2, 5, dtype=np.int32)], dict(axis=1, descending=0)),
    "argsort": ([F(2, 5)], [O(2, 5, dtype=np.int32)], dict(axis=-1, descending=1)),
    "arange": ([], [O(5, dtype=np.int32)], dict(start=10.0, step=-3.0)),
    "full": ([], [O(2, 3, dtype=np.float16)], dict(value=0.25)),
    "eye": ([], [O(3, 4)], dict(diagonal=1)),
    "tril": ([F(3, 3)], [O(3, 3)], dict(diagonal=0)),
    "triu": ([F(3, 3)], [O(3, 3)], dict(diagonal=-1)),
    "random_uniform": ([], [O(16)], dict(seed=7, offset=3, a=-1.0, b=1.0)),
    "random_normal": ([], [O(16)], dict(seed=7, offset=0, a=0.0, b=1.0)),
    "conv1d": ([F(1, 2, 8), F(3, 2, 3), F(3)], [O(1, 3, 4)], dict(_CONV, stride=[2], pad_begin=[1], pad_end=[0])),
    "conv2d": ([F(1, 2, 5, 5), F(4, 1, 3, 3), None], [O(1, 4, 3, 3)], dict(_CONV, groups=2)),
    "conv3d": ([F(1, 2, 4, 4, 4), F(3, 2, 3, 3, 3), F(3)], [O(1, 3, 2, 2, 2)], dict(_CONV, activation=1)),
    "conv_transpose1d": ([F(1, 2, 4), F(2, 3, 3), F(3)], [O(1, 3, 6)], _CONV),
    "conv_transpose2d": ([F(1, 2, 3, 3), F(2, 3, 3, 3), None], [O(1, 3, 7, 7)],
                         dict(_CONV, stride=[2, 2], output_padding=[0, 0])),
    "conv2d_backward_input": ([F(1, 3, 3, 3), F(3, 2, 3, 3)], [O(1, 2, 5, 5)], _CONV),
    "conv2d_backward_weight": ([F(1, 2, 5, 5), F(1, 3, 3, 3)], [O(3, 2, 3, 3), O(3)], _CONV),
    "max_pool": ([F(1, 2, 4, 4)], [O(1, 2, 2, 2), O(1, 2, 2, 2, dtype=np.int32)], _POOL),
    "avg_pool": ([F(1, 2, 4, 4)], [O(1, 2, 2, 2)], dict(_POOL, pad_begin=[1, 0],
                                                         pad_end=[0, 1], count_include_pad=1)),
    "global_max_pool": ([F(1, 2, 4, 4)], [O(1, 2)], {}),
    "global_avg_pool": ([F(1, 2, 4, 4)], [O(1, 2, 1, 1)], {}),
    "adaptive_avg_pool": ([F(1, 2, 5, 5)], [O(1, 2, 2, 3)], {}),
    "upsample_nearest": ([F(1, 2, 3, 3)], [O(1, 2, 6, 5)], dict(align_corners=0)),
    "upsample_bilinear": ([F(1, 2, 3, 3)], [O(1, 2, 5, 4)], dict(align_corners=1)),
    "max_pool_backward": ([F(1, 2, 2, 2), np.zeros((1, 2, 2, 2), np.int32) + I(0, 5)], [O(1, 2, 4, 4)], _POOL),
    "avg_pool_backward": ([F(1, 2, 2, 2)], [O(1, 2, 4, 4)], _POOL),
    "adaptive_avg_pool_backward": ([F(1, 2, 2, 3)], [O(1, 2, 5, 5)], {}),
    "attention": ([F(1, 2, 3, 4), F(1, 1, 5, 4), F(1, 1, 5, 2), None], [O(1, 2, 3, 2), O(1, 2, 3)],
                  dict(causal=1, scale=0.5)),
    "attention_backward": ([F(1, 2, 3, 4), F(1, 2, 5, 4), F(1, 2, 5, 2), F(1, 2, 3, 2), F(1, 2, 3, 2), F(1, 2, 3),
                            None], [O(1, 2, 3, 4), O(1, 2, 5, 4), O(1, 2, 5, 2)], dict(causal=0, scale=0.5)),
    "rope": ([F(1, 2, 3, 4), I(0, 5, 9), np.array([1.0, 4.0], np.float32)], [O(1, 2, 3, 4)], _ROPE),
    "rope_backward": ([F(1, 2, 3, 4), np.array([[2, 0], [3, 1], [4, 7]], np.int32)], [O(1, 2, 3, 4)],
                      dict(_ROPE, mode=tg.abi.TGL_ROPE_NEOX, multi=tg.abi.TGL_ROPE_MULTI_SECTIONS, sections=[1, 1])),
    "fft": ([F(2, 8, 2)], [O(2, 8, 2)], {}),
    "ifft": ([F(2, 6, 2)], [O(2, 6, 2)], {}),
    "selective_scan": ([F(1, 2, 3), F(1, 2, 3), F(2, 2), F(1, 2, 3), F(1, 2, 3), F(2), None, None],
                       [O(1, 2, 3), O(1, 2, 2)], dict(delta_softplus=1)),
    "sample": ([F(2, 5)], [O(2, dtype=np.int32)], dict(top_k=3, temperature=0.8, top_p=0.9, seed=11)),
    "softmax_backward": ([F(2, 3), F(2, 3)], [O(2, 3)], dict(axis=-1, scale=1.0)),
    "log_softmax_backward": ([F(2, 3), F(2, 3)], [O(2, 3)], dict(axis=-1, scale=2.0)),
    "layer_norm_backward": ([F(2, 3), F(2, 3), F(3)], [O(2, 3), O(3), O(3)], dict(n_norm_dims=1, eps=1e-5)),
    "rms_norm_backward": ([F(2, 3), F(2, 3), None], [O(2, 3), None], dict(n_norm_dims=1, eps=1e-5)),
    "cumsum_backward": ([F(2, 5)], [O(2, 5)], dict(axis=1)),
    "embedding_backward": ([F(3, 4), I(1, 4, 1)], [O(5, 4)], dict(has_padding_idx=1, padding_idx=4)),
    "cross_entropy": ([F(3, 5), I(1, -100, 4)], [O()], dict(reduction=tg.abi.TGL_REDUCTION_MEAN,
                                                             ignore_index=-100, label_smoothing=0.1)),
    "cross_entropy_backward": ([F(3, 5), I(1, 0, 4), F(3)], [O(3, 5)], dict(reduction=tg.abi.TGL_REDUCTION_NONE,
                                                                           ignore_index=-100)),
})


def test_every_op_has_a_case():
    assert sorted(CASES) == sorted(tg.abi.OPS)


def _floats(rng, shape):
    """Random floats of both signs: the first element positive, the second negative."""
    a = 3 * rng.standard_normal(shape)
    flat = a.reshape(-1)
    if flat.size >= 2:
        flat[0], flat[1] = abs(flat[0]) + 0.5, -abs(flat[1]) - 0.5
    return a.astype(np.float32)


def _run(dev, op, rng):
    ins, outs, kw = CASES[op]
    def make(a):
        if isinstance(a, tuple) and a[0] in tg.BLOCK_DTYPES:  # random GGUF blocks, finite f16 scales
            _, block, nbytes = tg.BLOCK_DTYPES[a[0]]
            raw = rng.integers(0, 256, (int(np.prod(a[1][:-1])) * -(-a[1][-1] // block), nbytes), dtype=np.uint8)
            raw[:, :2] = np.frombuffer(np.float16(0.125).tobytes(), np.uint8)
            return dev.blocks(raw, a[0], a[1])
        return None if a is None else dev.tensor(_floats(rng, a[1]) if isinstance(a, tuple) else a)
    tensors = [make(a) for a in ins]
    out = [None if o is None else dev.empty(*o) for o in outs]
    got = getattr(tg.ops, op)(*tensors, out=tuple(out), **kw)
    got = got if isinstance(got, tuple) else (got,)
    assert [g is o for g, o in zip(got, out)] == [True] * len(out)  # the outputs given are returned
    return [None if o is None else o.numpy() for o in out]


@pytest.fixture(scope="module")
def devices():
    with tg.Device("cpu") as ref:
        devs = {p: tg.Device(p) for p in PLUGINS}
        yield ref, devs
        for d in devs.values():
            d.close()


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("op", sorted(tg.abi.OPS))
def test_op_by_name_with_keywords(devices, plugin, op):
    ref_dev, devs = devices
    rng = np.random.default_rng([SEED, tg.abi.OPS[op]["id"]])
    want = _run(ref_dev, op, np.random.default_rng([SEED, tg.abi.OPS[op]["id"]]))
    got = _run(devs[plugin], op, rng)
    for k, (g, w) in enumerate(zip(got, want)):
        if w is None:
            continue
        assert g.shape == w.shape and g.dtype == w.dtype
        if w.dtype.kind == "f":  # a float result of all zeros would hide an op that wrote nothing
            assert not np.all(w == 0), "%s output %d is all zeros" % (op, k)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=2e-3, atol=2e-3,
                                   err_msg="%s output %d on %s vs cpu%s" % (op, k, plugin, SEED_NOTE))
