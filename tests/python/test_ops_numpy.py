"""The CPU reference plugin against numpy, op by op, for the op catalogue.

The differential suite checks the GLES plugin against the CPU plugin; this file checks the CPU
plugin itself against something independent of it (numpy, float64, and plain Python for the sort
order rules and Philox), on small cases of every op family: elementwise (unary, binary, compare,
logical, where), casts, reductions and scans, normalization, layout, indexing, selection and
generation.

Environment: TGL_NUMPY_PLUGINS (default "cpu") names the plugins checked here; TGL_TEST_SEED fixes
the random inputs (the seed in use is in pytest's header and shown with every failure).
"""

import math
import os

import numpy as np
import pytest

import tensorgl as tg
from conftest import SEED_NOTE, assert_sums_close

PLUGINS = [p.strip() for p in os.environ.get("TGL_NUMPY_PLUGINS", "cpu").split(",") if p.strip()]


@pytest.fixture(scope="module", params=PLUGINS)
def dev(request, lib):
    p = lib.load_plugin(request.param)
    d = p.open_device(0)
    yield d
    d.close()
    p.release()


@pytest.fixture
def r(rng):
    """conftest's random stream of this test (from TGL_TEST_SEED and the test's name)."""
    return rng


def as_keywords(params):
    """A ctypes params struct as the keywords of tensorgl.ops (every field but struct_size and the
    reserved ones; arrays as lists, their n_ counts given explicitly)."""
    if params is None:
        return {}
    return {name: (list(getattr(params, name)) if hasattr(getattr(params, name), "__len__")
                   else getattr(params, name))
            for name, _ in params._fields_ if name != "struct_size" and not name.startswith("reserved")}


def run(dev, op, inputs, outputs, params=None):
    """Runs `op` by name with keyword params (tensorgl.ops.<op>(..., **fields)) on numpy inputs
    (None: absent) into new outputs given as (shape, numpy dtype) or None (absent); returns the
    outputs as numpy arrays (None for absent ones)."""
    ins = [None if a is None else dev.tensor(np.asarray(a)) for a in inputs]
    outs = [None if o is None else dev.empty(o[0], o[1]) for o in outputs]
    getattr(tg.ops, op)(*ins, out=tuple(outs), **as_keywords(params))
    return [None if o is None else o.numpy() for o in outs]


def run1(dev, op, inputs, shape, dtype=np.float32, params=None):
    return run(dev, op, inputs, [(shape, dtype)], params)[0]


def close(got, ref, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(ref, np.float64), rtol=rtol,
                               atol=atol, equal_nan=True, err_msg=SEED_NOTE)


def same(got, ref):
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref), err_msg=SEED_NOTE)


def f32(a):
    return np.asarray(a, dtype=np.float32)


# --- unary --------------------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


UNARY = {
    "abs": np.abs, "neg": np.negative, "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh, "exp": np.exp,
    "sqrt": np.sqrt, "log": np.log,
    "gelu": lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2))),
    "silu": lambda x: x / (1 + np.exp(-x)), "sign": np.sign,
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "selu": lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
    "celu": lambda x: np.maximum(0, x) + np.minimum(0, np.expm1(x)),
    "hardsigmoid": lambda x: np.clip(x / 6 + 0.5, 0, 1),
    "hardswish": lambda x: x * np.clip(x / 6 + 0.5, 0, 1),
    "softplus": _softplus, "mish": lambda x: x * np.tanh(_softplus(x)),
    "expm1": np.expm1, "log1p": np.log1p,
    "rsqrt": lambda x: 1 / np.sqrt(x), "reciprocal": lambda x: 1 / x,
    "square": np.square, "sin": np.sin, "cos": np.cos, "erf": _erf, "floor": np.floor,
    "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tan": np.tan, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "gelu_quick": lambda x: x / (1 + np.exp(-1.702 * x)), "step": lambda x: (x > 0).astype(np.float64),
}
# Inputs moved into the domain of the ops that need it (both the plugin and numpy get them).
_PRE = {"sqrt": np.abs, "log": lambda x: np.abs(x) + 0.1, "log1p": np.abs,
        "rsqrt": lambda x: np.abs(x) + 0.1, "reciprocal": lambda x: x + 0.25,
        "asin": lambda x: x / 6, "acos": lambda x: x / 6, "atanh": lambda x: x / 6.5, "acosh": lambda x: np.abs(x) + 1,
        "tan": lambda x: x / 4}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(dev, r, name):
    x = f32(r.uniform(-6, 6, size=(3, 37)))
    x[0, :5] = [0.5, -0.5, 1.5, 2.5, -2.5]  # halves: round goes to even
    xin = f32(_PRE.get(name, lambda v: v)(x))
    ref = UNARY[name](xin.astype(np.float64))
    close(run1(dev, name, [xin], xin.shape), ref)


def test_unary_params(dev, r):
    x = f32(r.uniform(-4, 4, size=(50,)))
    xd = x.astype(np.float64)
    close(run1(dev, "leaky_relu", [x], x.shape, params=tg.LeakyReluParams(0, 0.2)),
          np.where(xd >= 0, xd, 0.2 * xd))
    close(run1(dev, "elu", [x], x.shape, params=tg.EluParams(0, 0.5)), np.where(xd > 0, xd, 0.5 * np.expm1(xd)))
    close(run1(dev, "celu", [x], x.shape, params=tg.EluParams(0, 2.0)),
          np.maximum(0, xd) + np.minimum(0, 2.0 * np.expm1(xd / 2.0)))
    close(run1(dev, "softplus", [x], x.shape, params=tg.SoftplusParams(0, 2.0, 3.0, 0)), _softplus(xd, 2.0, 3.0))
    close(run1(dev, "clamp", [x], x.shape, params=tg.ClampParams(0, -1.0, 2.5, 0)), np.clip(xd, -1.0, 2.5))
    close(run1(dev, "gelu", [x], x.shape, params=tg.GeluParams(0, tg.abi.TGL_GELU_TANH)),
          0.5 * xd * (1 + np.tanh(math.sqrt(2 / math.pi) * (xd + 0.044715 * xd ** 3))))


def test_unary_f16(dev, r):
    x = r.uniform(-3, 3, size=(41,)).astype(np.float16)
    for name in ("exp", "tanh", "gelu", "sin"):
        ref = UNARY[name](x.astype(np.float64)).astype(np.float16)  # one rounding from double
        same(run1(dev, name, [x], x.shape, np.float16), ref)
    big = np.array([60000, -60000, 11.5], np.float16)
    same(run1(dev, "square", [big], big.shape, np.float16), np.array([np.inf, np.inf, 132.25], np.float16))


def test_logical_not(dev):
    x = f32([0.0, -0.0, 1.0, np.nan, -2.0])
    same(run1(dev, "logical_not", [x], x.shape, np.bool_), [True, True, False, False, False])


# --- binary, compare, logical, where --------------------------------------------------------------

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "maximum": np.maximum, "minimum": np.minimum, "fmod": np.fmod, "remainder": np.remainder,
          "atan2": np.arctan2, "pow": lambda a, b: np.power(np.abs(a), b)}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast(dev, r, name):
    a = f32(r.uniform(-5, 5, size=(4, 1, 7)))
    b = f32(r.uniform(-3, 3, size=(5, 1)))
    b[np.abs(b) < 0.25] = 0.5
    if name == "pow":
        a = np.abs(a)
    ref = BINARY[name](a.astype(np.float64), b.astype(np.float64))
    close(run1(dev, name, [a, b], ref.shape), ref)


# Integer arithmetic: exact and wrapping as NumPy's (x // 0 = x % 0 = fmod(x, 0) = 0 included);
# div on integers is C's truncated division.
INT_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "floor_divide": np.floor_divide,
              "remainder": np.remainder, "fmod": np.fmod, "maximum": np.maximum, "minimum": np.minimum,
              "pow": np.power,
              "div": lambda a, b: np.where(b == 0, 0, np.trunc(a.astype(np.float64) / np.where(b == 0, 1, b)))}


@pytest.mark.parametrize("name", sorted(INT_BINARY))
@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8])
def test_integer_binary_like_numpy(dev, r, name, dtype):
    info = np.iinfo(dtype)
    lo, hi = (int(info.min), int(info.max)) if name not in ("div", "pow") else (-40, 40)
    a = r.integers(max(lo, int(info.min)), hi, size=(3, 1, 9), endpoint=True).astype(dtype)
    b = r.integers(max(-6, int(info.min)), 6, size=(4, 1), endpoint=True).astype(dtype)
    if name == "pow":
        b = np.abs(b).astype(dtype)  # NumPy refuses negative integer exponents (tensorgl: trunc(1 / a^-b))
    with np.errstate(all="ignore"):
        ref = INT_BINARY[name](a, b).astype(dtype)
    same(run1(dev, name, [a, b], ref.shape, dtype), ref)


def test_integer_extremes_like_numpy(dev):
    a = np.array([2**31 - 1, -2**31, -2**31, -7, 7, 5], np.int32)
    b = np.array([1, -1, 0, 2, -2, 0], np.int32)
    for name in ("add", "sub", "mul", "floor_divide", "remainder", "fmod"):
        with np.errstate(all="ignore"):
            ref = INT_BINARY[name](a, b).astype(np.int32)
        same(run1(dev, name, [a, b], a.shape, np.int32), ref)
    same(run1(dev, "neg", [a], a.shape, np.int32), -a)
    same(run1(dev, "abs", [a], a.shape, np.int32), np.abs(a))


def test_integer_reductions_and_scans(dev, r):
    x = r.integers(-2**31, 2**31 - 1, size=(5, 300), endpoint=True).astype(np.int32)
    for name, ref in (("sum", x.sum(axis=1, dtype=np.int32)), ("max", x.max(axis=1)), ("min", x.min(axis=1))):
        same(run1(dev, name, [x], (5,), np.int32, params=tg.ReduceParams(0, 0, 1, (1,))), ref)
    same(run1(dev, "cumsum", [x], x.shape, np.int32, params=tg.ScanParams(0, 1, 0, 0)), np.cumsum(x, axis=1, dtype=np.int32))
    small = r.integers(-3, 3, size=(5, 40), endpoint=True).astype(np.int32)
    same(run1(dev, "prod", [small], (5,), np.int32, params=tg.ReduceParams(0, 0, 1, (1,))), np.prod(small, axis=1, dtype=np.int32))


COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal,
           "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}


@pytest.mark.parametrize("name", sorted(COMPARE))
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_compare_logical(dev, r, name, dtype):
    a = r.integers(0, 3, size=(3, 8)).astype(dtype)
    b = r.integers(0, 3, size=(8,)).astype(dtype)
    if dtype == np.float32:
        a[0, 0], b[1] = np.nan, -0.0
    same(run1(dev, name, [a, b], a.shape, np.bool_), COMPARE[name](a, b))


def test_compare_u8_output(dev):
    a, b = f32([1, 2, np.nan]), f32([2, 2, np.nan])
    same(run1(dev, "le", [a, b], (3,), np.uint8), np.array([1, 1, 0], np.uint8))


def test_where(dev, r):
    cond = r.integers(0, 2, size=(4, 1)).astype(np.bool_)
    a = r.integers(-100, 100, size=(4, 6)).astype(np.int32)
    b = r.integers(-100, 100, size=(6,)).astype(np.int32)
    same(run1(dev, "where", [cond, a, b], (4, 6), np.int32), np.where(cond, a, b))


# --- cast ----------------------------------------------------------------------------------------

NP_DTYPES = [np.float32, np.float16, np.int32, np.int8, np.uint8, np.bool_]


def _cast_ref(x, to):
    """tensorgl's cast rules in numpy: floats round to nearest even (numpy's astype), float to int
    truncates and saturates with NaN to 0, narrowing ints wrap, to bool is x != 0."""
    to = np.dtype(to)
    if to == np.bool_:
        return x != 0
    if to.kind == "f":
        with np.errstate(over="ignore"):  # beyond the largest finite value: inf, as documented
            return x.astype(to)
    if x.dtype.kind == "f":
        info = np.iinfo(to)
        t = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=info.max, neginf=info.min))
        return np.clip(t, info.min, info.max).astype(to)
    return x.astype(np.int64).astype(to)  # two's-complement wrap-around


@pytest.mark.parametrize("src", NP_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dst", NP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_cast(dev, r, src, dst):
    if np.dtype(src).kind == "f":
        x = r.uniform(-300, 300, size=(29,)).astype(src)
        x[:6] = [np.nan, np.inf, -np.inf, -0.0, 255.5, -128.7]
    elif np.dtype(src) == np.bool_:
        x = r.integers(0, 2, size=(29,)).astype(np.bool_)
    else:
        info = np.iinfo(src)
        x = r.integers(info.min, info.max, size=(29,), endpoint=True).astype(src)
    got = run1(dev, "cast", [x], x.shape, dst)
    ref = _cast_ref(x, dst)
    if np.dtype(dst).kind == "f":
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=SEED_NOTE)
        same(got[~np.isnan(ref)], ref[~np.isnan(ref)])
    else:
        same(got, ref)


# --- reductions and scans ---------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argmax_argmin(dev, r, axis):
    x = f32(r.integers(-3, 4, size=(5, 6)))  # ties: the first index wins
    x[2, 3] = np.nan
    rank_axis = axis % 2
    oshape = tuple(n for d, n in enumerate(x.shape) if d != rank_axis)
    p = tg.ArgReduceParams(0, axis, 0, 0)
    same(run1(dev, "argmax", [x], oshape, np.int32, p), np.argmax(x, axis=axis))
    same(run1(dev, "argmin", [x], oshape, np.int32, p), np.argmin(x, axis=axis))


def _reduce_params(cls, axes, keepdims, last):
    p = cls()
    p.keepdims = int(keepdims)
    p.n_axes = len(axes)
    for i, a in enumerate(axes):
        p.axes[i] = a
    setattr(p, cls._fields_[-1][0], last)
    return p


def test_logsumexp_var_std_norm(dev, r):
    x = f32(r.uniform(-50, 50, size=(4, 9, 5)))
    xd = x.astype(np.float64)
    p = tg.ReduceParams(0, 0, 2, (1, -1))
    m = xd.max(axis=(1, 2), keepdims=True)
    close(run1(dev, "logsumexp", [x], (4,), params=p), (np.log(np.exp(xd - m).sum(axis=(1, 2), keepdims=True)) + m).reshape(4))
    for corr in (0.0, 1.0, 2.0):
        vp = _reduce_params(tg.VarParams, (0, 2), True, corr)
        close(run1(dev, "var", [x], (1, 9, 1), params=vp), xd.var(axis=(0, 2), ddof=corr, keepdims=True))
        close(run1(dev, "std", [x], (1, 9, 1), params=vp), xd.std(axis=(0, 2), ddof=corr, keepdims=True))
    for ord_ in (1.0, 2.0):
        np_ = _reduce_params(tg.VectorNormParams, (1,), False, ord_)
        close(run1(dev, "norm", [x], (4, 5), params=np_), np.linalg.norm(xd, ord=int(ord_), axis=1))


def test_reductions_scans_f16(dev, r):
    """f16 storage: computed wide, rounded once to f16 (the float64 reference rounded to float16)."""
    x = r.uniform(-3, 3, size=(5, 9)).astype(np.float16)
    xd = x.astype(np.float64)
    p = tg.ReduceParams(0, 0, 1, (1,))
    for name, fn in (("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min), ("prod", np.prod)):
        same(run1(dev, name, [x], (5,), np.float16, p), fn(xd, axis=1).astype(np.float16))
    same(run1(dev, "cumsum", [x], x.shape, np.float16, tg.ScanParams(0, 1, 0, 0)), np.cumsum(xd, axis=1).astype(np.float16))
    big = np.array([[40000, 40000, 40000]], np.float16)  # the sum overflows f16, the mean does not
    same(run1(dev, "sum", [big], (1,), np.float16, p), np.array([np.inf], np.float16))
    same(run1(dev, "mean", [big], (1,), np.float16, p), np.array([40000], np.float16))


def test_any_all(dev, r):
    x = r.integers(0, 2, size=(6, 7)).astype(np.int32) * r.integers(0, 2, size=(6, 1)).astype(np.int32)
    p = tg.ReduceParams(0, 0, 1, (1,))
    same(run1(dev, "any", [x], (6,), np.bool_, p), x.any(axis=1))
    same(run1(dev, "all", [x], (6,), np.bool_, p), x.all(axis=1))


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("axis", [0, 1])
def test_cumsum_cumprod(dev, r, exclusive, reverse, axis):
    x = f32(r.uniform(0.5, 1.5, size=(7, 6)))
    xd = x.astype(np.float64)
    p = tg.ScanParams(0, axis, exclusive, reverse)
    for name, fn, ident in (("cumsum", np.cumsum, 0.0), ("cumprod", np.cumprod, 1.0)):
        v = np.flip(xd, axis) if reverse else xd
        ref = fn(v, axis=axis)
        if exclusive:
            ref = np.concatenate([np.full_like(np.take(ref, [0], axis), ident),
                                  np.take(ref, range(v.shape[axis] - 1), axis)], axis=axis)
        if reverse:
            ref = np.flip(ref, axis)
        close(run1(dev, name, [x], x.shape, params=p), ref, rtol=1e-5)


# --- normalization -----------------------------------------------------------------------------

def _softmax_ref(x, axis, scale=1.0, mask=None):
    z = scale * x + (0 if mask is None else mask)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(z - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.where(s > 0, e / np.where(s > 0, s, 1), 0), np.where(s > 0, z - m - np.log(np.where(s > 0, s, 1)), -np.inf)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_softmax(dev, r, axis):
    x = f32(r.uniform(-8, 8, size=(3, 5, 7)))
    mshape = [1, 5, 7]
    mask = f32(np.where(r.random(mshape) < 0.3, -np.inf, r.uniform(-1, 1, size=mshape)))
    mask[0, 2, :] = -np.inf  # a fully masked row (along the last axis)
    p = tg.SoftmaxParams(0, axis, 0.5, 0)
    sm, lsm = _softmax_ref(x.astype(np.float64), axis, 0.5, mask.astype(np.float64))
    close(run1(dev, "softmax", [x, mask], x.shape, params=p), sm, rtol=1e-5, atol=1e-7)
    close(run1(dev, "log_softmax", [x, mask], x.shape, params=p), lsm, rtol=1e-5, atol=1e-5)
    close(run1(dev, "softmax", [x, None], x.shape, params=tg.SoftmaxParams(0, axis, 1.0, 0)),
          _softmax_ref(x.astype(np.float64), axis)[0], rtol=1e-5, atol=1e-7)


def _ln(x, k, eps, gamma=None, beta=None, rms=False):
    axes = tuple(range(x.ndim - k, x.ndim))
    if rms:
        y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    else:
        mu = x.mean(axis=axes, keepdims=True)
        y = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=axes, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


@pytest.mark.parametrize("k", [1, 2])
def test_layer_rms_norm(dev, r, k):
    x = f32(r.normal(3, 2, size=(4, 6, 10)))
    g = f32(r.uniform(0.5, 1.5, size=x.shape[3 - k:]))
    b = f32(r.uniform(-1, 1, size=x.shape[3 - k:]))
    res = f32(r.normal(0, 1, size=x.shape))
    p = tg.LayerNormParams(0, k, 1e-5, 0)
    xd, gd, bd, rd = (a.astype(np.float64) for a in (x, g, b, res))
    close(run1(dev, "layer_norm", [x, g, b], x.shape, params=p), _ln(xd, k, 1e-5, gd, bd), rtol=1e-5, atol=1e-6)
    close(run1(dev, "layer_norm", [x, None, None], x.shape, params=p), _ln(xd, k, 1e-5), rtol=1e-5, atol=1e-6)
    close(run1(dev, "rms_norm", [x, g], x.shape, params=p), _ln(xd, k, 1e-5, gd, rms=True), rtol=1e-5, atol=1e-6)
    y, s = run(dev, "add_layer_norm", [x, res, g, b], [(x.shape, np.float32), (x.shape, np.float32)], p)
    close(s, xd + rd)
    close(y, _ln(x.astype(np.float64) + rd, k, 1e-5, gd, bd), rtol=1e-5, atol=1e-5)
    y, s = run(dev, "add_rms_norm", [x, res, g], [(x.shape, np.float32), None], p)
    assert s is None
    close(y, _ln(xd + rd, k, 1e-5, gd, rms=True), rtol=1e-5, atol=1e-5)


def test_group_batch_norm(dev, r):
    x = f32(r.normal(1, 2, size=(2, 6, 5, 3)))
    g, b = f32(r.uniform(0.5, 2, size=6)), f32(r.uniform(-1, 1, size=6))
    xd = x.astype(np.float64)
    xg = xd.reshape(2, 3, -1)
    mu, var = xg.mean(axis=2, keepdims=True), xg.var(axis=2, keepdims=True)
    ref = ((xg - mu) / np.sqrt(var + 1e-5)).reshape(x.shape) * g.reshape(1, 6, 1, 1) + b.reshape(1, 6, 1, 1)
    close(run1(dev, "group_norm", [x, g, b], x.shape, params=tg.GroupNormParams(0, 3, 1e-5, 0)), ref,
          rtol=1e-5, atol=1e-5)
    mean, v = f32(r.normal(0, 1, size=6)), f32(r.uniform(0.5, 2, size=6))
    c = (lambda a: a.astype(np.float64).reshape(1, 6, 1, 1))
    ref = (xd - c(mean)) / np.sqrt(c(v) + 1e-3) * c(g) + c(b)
    close(run1(dev, "batch_norm", [x, mean, v, g, b], x.shape, params=tg.BatchNormParams(0, 1e-3)), ref,
          rtol=1e-5, atol=1e-5)


# --- layout ------------------------------------------------------------------------------------------

def _ints(r, shape, dtype=np.int32):
    return r.integers(-1000, 1000, size=shape).astype(dtype)


def test_permute_reshape_contiguous(dev, r):
    x = _ints(r, (2, 3, 4, 5))
    p = tg.PermuteParams(0, (2, 0, 3, 1, 0, 0, 0, 0), 0)
    same(run1(dev, "permute", [x], (4, 2, 5, 3), np.int32, p), np.transpose(x, (2, 0, 3, 1)))
    same(run1(dev, "reshape", [x], (6, 20), np.int32), x.reshape(6, 20))
    # contiguous of a transposed (strided) view
    view = dev.tensor(x.reshape(6, 20)).T
    assert view.stride() == (1, 20)
    out = tg.ops.contiguous(view)
    same(out.numpy(), x.reshape(6, 20).T)


@pytest.mark.parametrize("start,stop,step", [(1, 7, 2), (-2, None, 1), (None, None, -1), (8, 1, -3), (-100, 100, 4)])
def test_slice_narrow_flip(dev, r, start, stop, step):
    x = _ints(r, (3, 10), np.int8)
    big = (1 << 63) - 1
    p = tg.SliceParams(0, 1, start if start is not None else (big if step < 0 else 0),
                       stop if stop is not None else (-big - 1 if step < 0 else big), step)
    ref = x[:, start:stop:step]
    same(run1(dev, "slice", [x], ref.shape, np.int8, p), ref)
    same(run1(dev, "narrow", [x], (3, 4), np.int8, tg.NarrowParams(0, 1, -6, 4)), x[:, 4:8])
    same(run1(dev, "flip", [x], x.shape, np.int8, tg.FlipParams(0, 2, (0, 1, 0, 0, 0, 0, 0, 0))), x[::-1, ::-1])


def test_concat_split_stack(dev, r):
    a, b, c = _ints(r, (2, 3)), _ints(r, (2, 0)), _ints(r, (2, 5))
    same(run1(dev, "concat", [a, b, c], (2, 8), np.int32, tg.AxisParams(0, 1)), np.concatenate([a, b, c], axis=1))
    x = _ints(r, (7, 2))
    outs = run(dev, "split", [x], [((3, 2), np.int32), ((1, 2), np.int32), ((3, 2), np.int32)], tg.AxisParams(0, 0))
    for got, ref in zip(outs, np.split(x, [3, 4], axis=0)):
        same(got, ref)
    d = _ints(r, (2, 3))
    same(run1(dev, "stack", [a, d], (2, 3, 2), np.int32, tg.AxisParams(0, -1)), np.stack([a, d], axis=-1))


def test_expand_tile_roll(dev, r):
    x = f32(r.normal(size=(3, 1)))
    same(run1(dev, "expand", [x], (2, 3, 4)), np.broadcast_to(x, (2, 3, 4)))
    y = f32(r.normal(size=(2, 3)))
    same(run1(dev, "tile", [y], (2, 4, 9)), np.tile(y, (2, 2, 3)))
    z = _ints(r, (4, 5))
    p = tg.RollParams(0, 2, (0, 1, 0, 0, 0, 0, 0, 0), (1, -7, 0, 0, 0, 0, 0, 0))
    same(run1(dev, "roll", [z], z.shape, np.int32, p), np.roll(z, (1, -7), axis=(0, 1)))
    same(run1(dev, "roll", [z], z.shape, np.int32, tg.RollParams(0, 0, (0,) * 8, (3,) + (0,) * 7)), np.roll(z, 3))


@pytest.mark.parametrize("mode,np_mode", [(tg.abi.TGL_PAD_CONSTANT, "constant"), (tg.abi.TGL_PAD_REFLECT, "reflect"),
                                          (tg.abi.TGL_PAD_REPLICATE, "edge")])
def test_pad(dev, r, mode, np_mode):
    x = f32(r.normal(size=(3, 4, 5)))
    before, after = (0, 2, 1), (1, 3, 4)
    p = tg.PadParams(0, mode, 2.5, before + (0,) * 5, after + (0,) * 5)
    kw = {"constant_values": 2.5} if np_mode == "constant" else {}
    ref = np.pad(x, list(zip(before, after)), mode=np_mode, **kw)
    same(run1(dev, "pad", [x], ref.shape, params=p), ref)
    crop = tg.PadParams(0, mode, 0.0, (0, -1, 1) + (0,) * 5, (0, 0, -2) + (0,) * 5)
    ref = np.pad(x[:, 1:, :3], [(0, 0), (0, 0), (1, 0)], mode=np_mode, **({"constant_values": 0.0} if kw else {}))
    same(run1(dev, "pad", [x], ref.shape, params=crop), ref)


# --- indexing -----------------------------------------------------------------------------------------

def test_gather_index_select(dev, r):
    x = f32(r.normal(size=(4, 6)))
    idx = r.integers(0, 6, size=(3, 5)).astype(np.int32)
    same(run1(dev, "gather", [x, idx], idx.shape, params=tg.AxisParams(0, 1)), np.take_along_axis(x[:3], idx, axis=1))
    rows = np.array([3, 0, 3, 1], np.int32)
    same(run1(dev, "index_select", [x, rows], (4, 6), params=tg.AxisParams(0, 0)), x[rows])
    same(run1(dev, "index_select", [x, rows], (4, 4), params=tg.AxisParams(0, 1)), x[:, rows])


def test_scatter_reduce(dev, r):
    """tg.scatter_reduce (ABI 1.3 scatter reductions): x's value combined with its sources, in index order."""
    x = f32(r.normal(size=(3, 5)))
    idx = r.integers(0, 5, size=(3, 4)).astype(np.int32)
    src = f32(r.normal(size=(3, 4)))
    ufuncs = {"prod": np.multiply, "amin": np.minimum, "amax": np.maximum}
    for reduce, uf in ufuncs.items():
        ref = x.astype(np.float64)
        for i in range(3):
            for k in range(4):
                ref[i, idx[i, k]] = uf(ref[i, idx[i, k]], src[i, k])
        got = tg.scatter_reduce(dev.tensor(x), 1, dev.tensor(idx), dev.tensor(src), reduce).numpy()
        close(got, ref)
    with pytest.raises(ValueError):
        tg.scatter_reduce(dev.tensor(x), 1, dev.tensor(idx), dev.tensor(src), "mean")


def test_scatter_scatter_add_one_hot(dev, r):
    x = f32(r.normal(size=(3, 5)))
    idx = r.integers(0, 5, size=(3, 4)).astype(np.int32)  # duplicates likely
    src = f32(r.normal(size=(3, 4)))
    ref_set, ref_add = x.copy(), x.astype(np.float64)
    mag = np.abs(ref_add)  # the sum of |terms| of each element
    for i in range(3):
        for k in range(4):  # row-major order: the last write wins
            ref_set[i, idx[i, k]] = src[i, k]
            ref_add[i, idx[i, k]] += src[i, k]
            mag[i, idx[i, k]] += abs(float(src[i, k]))
    p = tg.AxisParams(0, 1)
    same(run1(dev, "scatter", [x, idx, src], x.shape, params=p), ref_set)
    # Up to 4 f32 additions an element, in any order: each rounds by at most 2^-24 of the terms'
    # magnitude.
    assert_sums_close(run1(dev, "scatter_add", [x, idx, src], x.shape, params=p), ref_add, mag, 1e-6)
    lab = np.array([[2, 0], [1, 3]], np.int32)
    same(run1(dev, "one_hot", [lab], (2, 2, 4), np.float32), np.eye(4, dtype=np.float32)[lab])


def test_index_out_of_range(dev):
    x = f32(np.zeros((2, 3)))
    with pytest.raises(tg.TensorGLError) as ei:
        run1(dev, "index_select", [x, np.array([0, 3], np.int32)], (2, 2), params=tg.AxisParams(0, 1))
    assert ei.value.status_name == "TGL_ERROR_INDEX_OUT_OF_RANGE"


# --- selection ------------------------------------------------------------------------------------------

def _order(row, descending):
    """Stable order of one row: NaN above every number, -0 == +0 (Python's sort is stable, also
    with reverse=True)."""
    key = lambda i: (1, 0.0) if math.isnan(row[i]) else (0, float(row[i]))  # noqa: E731
    return sorted(range(len(row)), key=key, reverse=descending)


@pytest.mark.parametrize("descending", [0, 1])
@pytest.mark.parametrize("axis", [0, 1])
def test_sort_argsort_topk(dev, r, descending, axis):
    x = f32(r.integers(-3, 4, size=(6, 9)))  # many ties
    x[1, 2], x[3, 0], x[0, 4] = np.nan, -0.0, np.inf
    xt = np.moveaxis(x, axis, -1)
    order = np.array([[_order(row, descending) for row in xt]]).reshape(xt.shape)
    ref_idx = np.moveaxis(order, -1, axis).astype(np.int32)
    ref_val = np.take_along_axis(x, ref_idx, axis=axis)
    p = tg.SortParams(0, axis, descending, 0)
    vals, idx = run(dev, "sort", [x], [(x.shape, np.float32), (x.shape, np.int32)], p)
    same(idx, ref_idx)
    same(vals, ref_val)
    same(run1(dev, "argsort", [x], x.shape, np.int32, p), ref_idx)
    k = 3
    kshape = tuple(k if d == axis else n for d, n in enumerate(x.shape))
    vals, idx = run(dev, "topk", [x], [(kshape, np.float32), (kshape, np.int32)], p)
    same(idx, np.take(ref_idx, range(k), axis=axis))
    same(vals, np.take(ref_val, range(k), axis=axis))


# --- generation -------------------------------------------------------------------------------------------

def test_arange_full_eye_tril_triu(dev, r):
    same(run1(dev, "arange", [], (5,), np.int32, tg.ArangeParams(0, 0, 10.0, -3.0)), np.arange(10, -5, -3, dtype=np.int32))
    close(run1(dev, "arange", [], (7,), np.float32, tg.ArangeParams(0, 0, 0.5, 0.25)), 0.5 + 0.25 * np.arange(7))
    same(run1(dev, "full", [], (2, 3), np.float16, tg.FullParams(0, 0, 1.0 / 3.0)), np.full((2, 3), 1 / 3, np.float16))
    same(run1(dev, "full", [], (4,), np.uint8, tg.FullParams(0, 0, 300.0)), np.full(4, 255, np.uint8))
    for k in (-1, 0, 2):
        same(run1(dev, "eye", [], (2, 3, 5), np.float32, tg.DiagonalParams(0, k)),
             np.broadcast_to(np.eye(3, 5, k, dtype=np.float32), (2, 3, 5)))
        x = _ints(r, (2, 4, 6))
        same(run1(dev, "tril", [x], x.shape, np.int32, tg.DiagonalParams(0, k)), np.tril(x, k))
        same(run1(dev, "triu", [x], x.shape, np.int32, tg.DiagonalParams(0, k)), np.triu(x, k))


_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def philox4x32_10(counters, key):
    """Philox4x32-10 (Salmon et al., SC'11) on arrays of counters (n, 4) uint32, one key (k0, k1)."""
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    mask = np.uint64(0xFFFFFFFF)
    for rnd in range(10):
        if rnd:
            k0, k1 = (k0 + np.uint64(_PHILOX_W[0])) & mask, (k1 + np.uint64(_PHILOX_W[1])) & mask
        p0, p1 = np.uint64(_PHILOX_M[0]) * c[0], np.uint64(_PHILOX_M[1]) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & mask, p1 & mask,
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & mask, p0 & mask]
    return np.stack(c, axis=1).astype(np.uint32)


def test_philox_known_answers():
    # Random123's kat_vectors for philox4x32_10.
    kats = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
            ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
            ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
             (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]
    for ctr, key, want in kats:
        got = philox4x32_10(np.array([ctr], np.uint32), key)[0]
        assert tuple(int(v) for v in got) == want


def _philox_words(seed, offset, n):
    c = np.arange(n, dtype=np.uint64) + np.uint64(offset)
    ctr = np.zeros((n, 4), np.uint32)
    ctr[:, 0] = (c & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    ctr[:, 1] = (c >> np.uint64(32)).astype(np.uint32)
    return philox4x32_10(ctr, (seed & 0xFFFFFFFF, seed >> 32))


def test_random_uniform_normal(dev):
    seed, offset, n = 0x123456789ABCDEF, (1 << 32) - 5, 1000  # the counter carries into word 1
    w = _philox_words(seed, offset, n)
    u = (w[:, 0] >> 8).astype(np.float32) * np.float32(2.0 ** -24)
    a, b = np.float32(-2.0), np.float32(3.0)
    ref = a + (b - a) * u  # f32 arithmetic, as documented
    same(run1(dev, "random_uniform", [], (n,), np.float32, tg.RandomParams(0, 0, seed, offset, a, b)), ref)
    u1 = ((w[:, 0] >> 8).astype(np.float64) + 1) * 2.0 ** -24
    u2 = (w[:, 1] >> 8).astype(np.float64) * 2.0 ** -24
    ref = 0.5 + 2.0 * np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)
    close(run1(dev, "random_normal", [], (n,), np.float32, tg.RandomParams(0, 0, seed, offset, 0.5, 2.0)), ref,
          rtol=1e-5, atol=1e-5)
