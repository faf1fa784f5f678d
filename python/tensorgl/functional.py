"""Functions over tensorgl tensors, named and shaped like torch.nn.functional / torch where PyTorch
has the op (softmax(x, dim), conv2d(x, w, b, stride, padding, dilation, groups), ...); the ops
PyTorch lacks keep their ABI names (rms_norm, linear_qkv, rope, sample, ...). Every function here
is also an attribute of the tensorgl package. docs/python.md lists every deviation from PyTorch;
the ones that matter most: index outputs are int32 (torch: int64); int64 is a storage and index
dtype only (cast, layout, indices; no arithmetic); float64 does not exist;
a fully masked attention row gives 0 (torch: NaN); training-only arguments (dropout_p > 0,
batch_norm(training=True), embedding(max_norm=...)) raise instead of being ignored.
"""

import builtins
import math

import numpy as np

from . import abi, ops
from ._tensor import Tensor, tgl_dtype

_bmax, _bmin, _babs, _bsum, _bround = builtins.max, builtins.min, builtins.abs, builtins.sum, builtins.round


# --- helpers ------------------------------------------------------------------------------------
def _device_of(*xs):
    for x in xs:
        if isinstance(x, Tensor):
            return x.device
    raise TypeError("no tensorgl.Tensor among the arguments")


def _as_tensor(x, like):
    """x as a tensor on like's device: tensors as they are, numbers as 0-d tensors of like's dtype."""
    if isinstance(x, Tensor) or x is None:
        return x
    arr = np.asarray(x)
    if arr.dtype.kind in "fiub" and like.dtype != "bfloat16" and (arr.ndim == 0 or arr.dtype.kind == "f"):
        arr = arr.astype(like.dtype)
    return like.device.tensor(arr)


def _index(x, like):
    """An index operand as an int32 or int64 tensor: numpy int64 indices stay int64 (the op checks
    their whole value); other integer arrays become int32 (checked to fit)."""
    if isinstance(x, Tensor):
        return x
    arr = np.asarray(x)
    if arr.dtype.kind not in "iu":
        raise TypeError("indices must be integers, got %s" % arr.dtype)
    if arr.dtype == np.int64:
        return like.device.tensor(arr)
    if arr.size and (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min):
        raise ValueError("indices do not fit in int32; pass them as int64")
    return like.device.tensor(arr.astype(np.int32))


def _tuple(v, n, what):
    t = (v,) * n if isinstance(v, (int, np.integer)) else tuple(int(a) for a in v)
    if len(t) != n:
        raise ValueError("%s: expected %d values, got %r" % (what, n, v))
    return t


def _dims(dim, ndim):
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, (int, np.integer)) else list(dim)
    return [d % ndim if ndim else d for d in dims]


def _reduced_shape(shape, dims, keepdim):
    return tuple(1 if i in dims else n for i, n in enumerate(shape)) if keepdim else \
        tuple(n for i, n in enumerate(shape) if i not in dims)


# --- elementwise --------------------------------------------------------------------------------
# Same name and meaning in torch, no arguments besides the tensor: the ABI ops as they are.
for _name in ("relu", "sigmoid", "tanh", "exp", "log", "sqrt", "silu", "sign", "selu", "hardsigmoid",
              "hardswish", "mish", "expm1", "log1p", "rsqrt", "reciprocal", "square", "sin", "cos", "erf",
              "floor", "ceil", "round", "trunc", "logical_not", "abs", "neg", "asin", "acos", "atan", "sinh",
              "cosh", "tan", "asinh", "acosh", "atanh"):
    globals()[_name] = getattr(ops, _name)


def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError("gelu: approximate must be 'none' or 'tanh', got %r" % (approximate,))
    return ops.gelu(x, approximate=abi.TGL_GELU_TANH if approximate == "tanh" else abi.TGL_GELU_ERF)


def leaky_relu(x, negative_slope=0.01):
    return ops.leaky_relu(x, negative_slope=negative_slope)


def elu(x, alpha=1.0):
    return ops.elu(x, alpha=alpha)


def celu(x, alpha=1.0):
    return ops.celu(x, alpha=alpha)


def softplus(x, beta=1.0, threshold=20.0):
    return ops.softplus(x, beta=beta, threshold=threshold)


def clamp(x, min=None, max=None):
    return ops.clamp(x, min=-math.inf if min is None else min, max=math.inf if max is None else max)


def hardtanh(x, min_val=-1.0, max_val=1.0):
    return clamp(x, min_val, max_val)


def relu6(x):
    return clamp(x, 0.0, 6.0)


def _binary(op):
    def fn(a, b):
        if not isinstance(a, Tensor):
            a = _as_tensor(a, b)
        b = _as_tensor(b, a)
        return getattr(ops, op)(a, b)
    fn.__name__ = op
    fn.__doc__ = "Elementwise %s with numpy broadcasting (a number becomes a 0-d tensor of the other operand's dtype)." % op
    return fn


# On integer tensors (int32, int8, uint8) the arithmetic is exact and wraps around; div is C's
# truncated division, floor_divide Python's //, and x // 0 = x % 0 = 0 (ops.h, "Integer arithmetic").
# int64 takes add, sub, mul, maximum, minimum and the comparisons (exact, modulo 2^64).
for _name in ("add", "sub", "mul", "div", "floor_divide", "maximum", "minimum", "pow", "fmod", "remainder", "atan2",
              "logical_and", "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge"):
    globals()[_name] = _binary(_name)
subtract, multiply, divide, true_divide = sub, mul, div, div


def where(condition, input, other):
    a = input if isinstance(input, Tensor) else _as_tensor(input, other)
    b = _as_tensor(other, a)
    return ops.where(condition, a, b)


# --- matmul and linear --------------------------------------------------------------------------
def matmul(a, b):
    """torch.matmul: 1-D operands are promoted (and the added dim removed), batch dims broadcast."""
    if not isinstance(a, Tensor):
        a = _as_tensor(a, b)
    b = _as_tensor(b, a)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: both operands need at least one dim (shapes %s, %s)" % (a.shape, b.shape))
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    b2 = b.unsqueeze(-1) if b.ndim == 1 else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    y = a.device.empty(tuple(batch) + (a2.shape[-2], b2.shape[-1]), a.dtype)
    ops.matmul(a2, b2, C=y)
    if a.ndim == 1:
        y = y.squeeze(-2)
    if b.ndim == 1:
        y = y.squeeze(-1)
    return y


def linear(input, weight, bias=None):
    """y = input @ weight.T + bias; weight (out_features, in_features), as torch."""
    y = input.device.empty(input.shape[:-1] + (weight.shape[0],), input.dtype)
    return ops.linear(input, weight, bias, y=y)


# --- reductions ---------------------------------------------------------------------------------
def _reduce(op, x, dim, keepdim, **params):
    dims = _dims(dim, x.ndim)
    y = x.device.empty(_reduced_shape(x.shape, dims, keepdim),
                       np.bool_ if op in ("any", "all") else x.dtype)
    return getattr(ops, op)(x, y=y, axes=dims, keepdims=int(keepdim), **params)


def sum(x, dim=None, keepdim=False):
    return _reduce("sum", x, dim, keepdim)


def mean(x, dim=None, keepdim=False):
    return _reduce("mean", x, dim, keepdim)


def prod(x, dim=None, keepdim=False):
    return _reduce("prod", x, dim, keepdim)


def amax(x, dim=None, keepdim=False):
    return _reduce("max", x, dim, keepdim)


def amin(x, dim=None, keepdim=False):
    return _reduce("min", x, dim, keepdim)


def logsumexp(x, dim, keepdim=False):
    return _reduce("logsumexp", x, dim, keepdim)


def any(x, dim=None, keepdim=False):
    return _reduce("any", x, dim, keepdim)


def all(x, dim=None, keepdim=False):
    return _reduce("all", x, dim, keepdim)


def var(x, dim=None, correction=1, keepdim=False):
    return _reduce("var", x, dim, keepdim, correction=correction)


def std(x, dim=None, correction=1, keepdim=False):
    return _reduce("std", x, dim, keepdim, correction=correction)


def norm(x, p=2, dim=None, keepdim=False):
    """torch.linalg.vector_norm for ord (p) 1 or 2."""
    return _reduce("norm", x, dim, keepdim, ord=p)


def _arg(op, x, dim, keepdim, dtype):
    if dim is None:
        x, dim = x.reshape(-1), 0
    dims = _dims(dim, x.ndim)
    y = x.device.empty(_reduced_shape(x.shape, dims, keepdim), dtype)
    return getattr(ops, op)(x, y=y, axis=dims[0], keepdims=int(keepdim))


def argmax(x, dim=None, keepdim=False, dtype=np.int32):
    """The index of the first largest element; dtype: np.int32 or np.int64 indices."""
    return _arg("argmax", x, dim, keepdim, dtype)


def argmin(x, dim=None, keepdim=False, dtype=np.int32):
    """The index of the first smallest element; dtype: np.int32 or np.int64 indices."""
    return _arg("argmin", x, dim, keepdim, dtype)


def _extreme(elementwise, reduce, arg, what):
    def fn(x, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return elementwise(x, dim)
        if dim is None:
            return reduce(x)
        return reduce(x, dim, keepdim), arg(x, dim, keepdim)
    fn.__name__ = what
    fn.__doc__ = ("torch.%s: the %simum (dim None), (values, indices) along dim (indices int32), or "
                  "%simum(x, other)" % (what, what, what))
    return fn


max = _extreme(maximum, amax, argmax, "max")
min = _extreme(minimum, amin, argmin, "min")


def cumsum(x, dim):
    return ops.cumsum(x, axis=dim)


def cumprod(x, dim):
    return ops.cumprod(x, axis=dim)


# --- normalization ------------------------------------------------------------------------------
def softmax(x, dim, dtype=None):
    if dtype is not None:
        x = x.to(dtype)
    return ops.softmax(x, axis=dim, scale=1.0)


def log_softmax(x, dim, dtype=None):
    if dtype is not None:
        x = x.to(dtype)
    return ops.log_softmax(x, axis=dim, scale=1.0)


def _norm_dims(x, normalized_shape, what):
    shape = _tuple(normalized_shape, 1, what) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if x.shape[len(x.shape) - len(shape):] != shape or len(shape) > x.ndim:
        raise ValueError("%s: normalized_shape %r is not the trailing shape of the input %r" % (what, shape, x.shape))
    return len(shape)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    n = _norm_dims(x, normalized_shape, "layer_norm")
    return ops.layer_norm(x, weight, bias, n_norm_dims=n, eps=eps)


def rms_norm(x, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm (PyTorch 2.4): eps None is the dtype's machine epsilon."""
    n = _norm_dims(x, normalized_shape, "rms_norm")
    if eps is None:
        eps = float(np.finfo(x.dtype).eps)
    return ops.rms_norm(x, weight, n_norm_dims=n, eps=eps)


def group_norm(x, num_groups, weight=None, bias=None, eps=1e-5):
    return ops.group_norm(x, weight, bias, num_groups=num_groups, eps=eps)


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Inference batch norm with the running statistics; training=True raises (no batch statistics op)."""
    if training:
        raise NotImplementedError("batch_norm: training=True (batch statistics) is not implemented; "
                                  "tensorgl's batch_norm is the inference form")
    return ops.batch_norm(x, running_mean, running_var, weight, bias, eps=eps)


# --- layout -------------------------------------------------------------------------------------
def _join(op, tensors, dim, out_shape):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("%s: no tensors" % op)
    y = tensors[0].device.empty(out_shape, tensors[0].dtype)
    if len(tensors) <= 8:
        return getattr(ops, op)(tensors, y=y, axis=dim)
    # More than the ABI's 8 inputs: groups of 8 into slices of y, as plugin_api.h suggests.
    start = 0
    for i in range(0, len(tensors), 8):
        group = tensors[i:i + 8]
        size = _bsum(t.shape[dim] for t in group) if op == "concat" else len(group)
        getattr(ops, op)(group, y=y.narrow(dim, start, size), axis=dim)
        start += size
    return y


def cat(tensors, dim=0):
    tensors = list(tensors)
    d = dim % tensors[0].ndim
    shape = list(tensors[0].shape)
    shape[d] = _bsum(t.shape[d] for t in tensors)
    return _join("concat", tensors, d, shape)


concat = concatenate = cat


def stack(tensors, dim=0):
    tensors = list(tensors)
    d = dim % (tensors[0].ndim + 1)
    shape = list(tensors[0].shape)
    shape.insert(d, len(tensors))
    return _join("stack", tensors, d, shape)


def pad(x, pad, mode="constant", value=0.0):
    """torch.nn.functional.pad: pad lists (before, after) pairs from the LAST dim backwards;
    negative pads crop. Modes constant, reflect, replicate ('circular' is not implemented)."""
    modes = {"constant": abi.TGL_PAD_CONSTANT, "reflect": abi.TGL_PAD_REFLECT, "replicate": abi.TGL_PAD_REPLICATE}
    if mode not in modes:
        raise ValueError("pad: mode must be one of %s, got %r" % (", ".join(modes), mode))
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ValueError("pad: %r must hold (before, after) pairs for at most %d dims" % (tuple(pad), x.ndim))
    before, after = [0] * x.ndim, [0] * x.ndim
    for i in range(len(pad) // 2):
        before[x.ndim - 1 - i], after[x.ndim - 1 - i] = int(pad[2 * i]), int(pad[2 * i + 1])
    y = x.device.empty([b + n + a for b, n, a in zip(before, x.shape, after)], x.dtype)
    return ops.pad(x, y=y, mode=modes[mode], value=value or 0.0, before=before, after=after)


def tile(x, dims):
    dims = tuple(dims)
    lead = _bmax(len(dims), x.ndim)
    reps = (1,) * (lead - len(dims)) + dims
    shape = (1,) * (lead - x.ndim) + x.shape
    return ops.tile(x, y=x.device.empty([r * n for r, n in zip(reps, shape)], x.dtype))


def roll(x, shifts, dims=None):
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [] if dims is None else ([dims] if isinstance(dims, int) else list(dims))
    if dims and len(dims) != len(shifts):
        raise ValueError("roll: %d shifts for %d dims" % (len(shifts), len(dims)))
    return ops.roll(x, y=x.device.empty(x.shape, x.dtype), n_axes=len(dims), axes=dims, shifts=shifts)


def flip(x, dims):
    dims = [dims] if isinstance(dims, int) else list(dims)
    return ops.flip(x, axes=dims, y=x.device.empty(x.shape, x.dtype))


def permute(x, dims):
    return x.permute(dims)


def reshape(x, shape):
    return x.reshape(shape)


def transpose(x, dim0, dim1):
    return x.transpose(dim0, dim1)


def split(x, split_size_or_sections, dim=0):
    """torch.split: views (no copy). ops.split copies into given outputs."""
    n = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        sizes = [_bmin(split_size_or_sections, n - s) for s in range(0, n, split_size_or_sections)]
    else:
        sizes = list(split_size_or_sections)
    if _bsum(sizes) != n:
        raise ValueError("split: sizes %r do not add up to %d" % (sizes, n))
    out, start = [], 0
    for s in sizes:
        out.append(x.narrow(dim, start, s))
        start += s
    return tuple(out)


# --- indexing and selection ---------------------------------------------------------------------
def gather(x, dim, index):
    index = _index(index, x)
    return ops.gather(x, index, y=x.device.empty(index.shape, x.dtype), axis=dim)


def index_select(x, dim, index):
    index = _index(index, x)
    d = dim % x.ndim
    shape = list(x.shape)
    shape[d] = index.shape[0]
    return ops.index_select(x, index, y=x.device.empty(shape, x.dtype), axis=d)


def scatter(x, dim, index, src):
    index = _index(index, x)
    if not isinstance(src, Tensor):
        src = x.device.tensor(np.full(index.shape, src, dtype=x.dtype))
    return ops.scatter(x, index, src, y=x.device.empty(x.shape, x.dtype), axis=dim)


def index_copy_(x, dim, index, src):
    """torch.Tensor.index_copy_ (set_rows, ABI 1.3): rows index[k] of x along dim = src's row k, in
    place (only those rows are written); of duplicate indices the last wins. Returns x."""
    index = _index(index, x)
    return ops.set_rows(x, index, src, y=x, axis=dim % x.ndim)


def index_copy(x, dim, index, src):
    """torch.index_copy: index_copy_ into a copy of x."""
    index = _index(index, x)
    return ops.set_rows(x, index, src, y=x.device.empty(x.shape, x.dtype), axis=dim % x.ndim)


def scatter_add(x, dim, index, src):
    index = _index(index, x)
    return ops.scatter_add(x, index, src, y=x.device.empty(x.shape, x.dtype), axis=dim)


_SCATTER_REDUCE = {"prod": abi.TGL_SCATTER_MUL, "amin": abi.TGL_SCATTER_AMIN, "amax": abi.TGL_SCATTER_AMAX}


def scatter_reduce(x, dim, index, src, reduce, include_self=True):
    """torch.scatter_reduce with include_self=True: 'sum' (scatter_add), 'prod', 'amin', 'amax'
    (scatter's reduction, ABI 1.3); 'mean' and include_self=False are not ops of the ABI."""
    if not include_self:
        raise ValueError("scatter_reduce: include_self=False is not supported (x's value is always included)")
    if reduce == "sum":
        return scatter_add(x, dim, index, src)
    if reduce not in _SCATTER_REDUCE:
        raise ValueError("scatter_reduce: reduce must be 'sum', 'prod', 'amin' or 'amax', got %r" % (reduce,))
    index = _index(index, x)
    return ops.scatter(x, index, src, y=x.device.empty(x.shape, x.dtype), axis=dim, reduction=_SCATTER_REDUCE[reduce])


def one_hot(tensor, num_classes=-1, dtype=np.int32):
    """torch.nn.functional.one_hot; the result is int32 (dtype= picks another; torch: int64)."""
    if num_classes < 0:
        num_classes = int(tensor.numpy().max()) + 1 if tensor.size else 0
    return ops.one_hot(tensor, y=tensor.device.empty(tensor.shape + (num_classes,), dtype))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of weight (V, D) at input's indices: shape input.shape + (D,). padding_idx only matters
    for the gradient (embedding_backward), as in torch; max_norm is not implemented (raises)."""
    if max_norm is not None:
        raise NotImplementedError("embedding: max_norm (renormalizing weight in place) is not implemented")
    idx = _index(input, weight)
    rows = index_select(weight, 0, idx.reshape(-1))
    return rows.reshape(idx.shape + (weight.shape[1],))


def topk(x, k, dim=-1, largest=True, sorted=True):
    """(values, indices), largest (or smallest) first, always sorted; indices int32."""
    d = dim % x.ndim
    shape = list(x.shape)
    shape[d] = k
    values, indices = x.device.empty(shape, x.dtype), x.device.empty(shape, np.int32)
    return ops.topk(x, out=(values, indices), axis=d, descending=int(largest))


def sort(x, dim=-1, descending=False, stable=True):
    """(values, indices); always stable (torch's stable=True)."""
    return ops.sort(x, out=(x.device.empty(x.shape, x.dtype), x.device.empty(x.shape, np.int32)),
                    axis=dim, descending=int(descending))


def argsort(x, dim=-1, descending=False, stable=True):
    return ops.argsort(x, y=x.device.empty(x.shape, np.int32), axis=dim, descending=int(descending))


# --- generation ---------------------------------------------------------------------------------
def arange(start, end=None, step=1, *, device, dtype=None):
    if end is None:
        start, end = 0, start
    n = _bmax(0, math.ceil((end - start) / step))
    if dtype is None:
        dtype = np.int32 if builtins.all(float(v).is_integer() for v in (start, end, step)) else np.float32
    return ops.arange(y=device.empty((n,), dtype), start=start, step=step)


def full(size, fill_value, *, device, dtype=np.float32):
    return ops.full(y=device.empty(size, dtype), value=fill_value)


def zeros(*size, device, dtype=np.float32):
    size = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
    return full(size, 0.0, device=device, dtype=dtype)


def ones(*size, device, dtype=np.float32):
    size = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
    return full(size, 1.0, device=device, dtype=dtype)


def eye(n, m=None, *, device, dtype=np.float32):
    return ops.eye(y=device.empty((n, n if m is None else m), dtype), diagonal=0)


def tril(x, diagonal=0):
    return ops.tril(x, diagonal=diagonal)


def triu(x, diagonal=0):
    return ops.triu(x, diagonal=diagonal)


def rand(*size, device, seed=0, offset=0, dtype=np.float32):
    """Uniform [0, 1) from Philox4x32-10 (seed, offset): the same numbers on every plugin.
    Unlike torch there is no global generator: pass seed (and offset to continue a stream)."""
    size = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
    return ops.random_uniform(y=device.empty(size, dtype), seed=seed, offset=offset, a=0.0, b=1.0)


def randn(*size, device, seed=0, offset=0, dtype=np.float32):
    size = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
    return ops.random_normal(y=device.empty(size, dtype), seed=seed, offset=offset, a=0.0, b=1.0)


# --- convolution, pooling, resampling -----------------------------------------------------------
def _conv(x, w, b, stride, padding, dilation, groups, s, transpose=False, output_padding=0):
    name = ("conv_transpose%dd" if transpose else "conv%dd") % s
    stride, dilation = _tuple(stride, s, name + " stride"), _tuple(dilation, s, name + " dilation")
    k = w.shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same" and not transpose:
            if builtins.any(st != 1 for st in stride):
                raise ValueError("%s: padding='same' needs stride 1 (as torch)" % name)
            total = [d * (kk - 1) for d, kk in zip(dilation, k)]
            begin = [t // 2 for t in total]
            end = [t - bb for t, bb in zip(total, begin)]
            padding = None
        else:
            raise ValueError("%s: padding must be a number, a tuple, 'valid' or 'same', got %r" % (name, padding))
    if padding is not None:
        begin = end = _tuple(padding, s, name + " padding")
    out_pad = _tuple(output_padding, s, name + " output_padding")
    spatial = x.shape[2:]
    if transpose:
        out = [(i - 1) * st - pb - pe + d * (kk - 1) + op + 1
               for i, st, pb, pe, d, kk, op in zip(spatial, stride, begin, end, dilation, k, out_pad)]
        c_out = w.shape[1] * groups
    else:
        out = [(i + pb + pe - d * (kk - 1) - 1) // st + 1
               for i, st, pb, pe, d, kk in zip(spatial, stride, begin, end, dilation, k)]
        c_out = w.shape[0]
    if builtins.any(o < 1 for o in out):
        raise ValueError("%s: the kernel %r is larger than the padded input %r" % (name, tuple(k), spatial))
    y = x.device.empty((x.shape[0], c_out) + tuple(out), x.dtype)
    return getattr(ops, name)(x, w, b, y=y, groups=groups, stride=stride, dilation=dilation,
                              pad_begin=begin, pad_end=end, output_padding=out_pad)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, True, output_padding)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, True, output_padding)


def _pool_size(i, k, st, p, d, ceil_mode):
    num = i + 2 * p - d * (k - 1) - 1
    o = (-(-num // st) if ceil_mode else num // st) + 1
    if ceil_mode and (o - 1) * st >= i + p:
        o -= 1  # the last window must start inside the input or the left padding
    return o


def _pool(op, x, s, kernel_size, stride, padding, dilation, ceil_mode, count_include_pad=False, indices=False):
    name = "%s%dd" % (op, s)
    unbatched = x.ndim == s + 1
    if unbatched:
        x = x.unsqueeze(0)
    k = _tuple(kernel_size, s, name + " kernel_size")
    st = k if stride is None or stride == [] else _tuple(stride, s, name + " stride")
    p, d = _tuple(padding, s, name + " padding"), _tuple(dilation, s, name + " dilation")
    out = [_pool_size(*a, ceil_mode) for a in zip(x.shape[2:], k, st, p, d)]
    y = x.device.empty(x.shape[:2] + tuple(out), x.dtype)
    idx = x.device.empty(y.shape, np.int32) if indices else None
    params = dict(kernel=k, stride=st, pad_begin=p, pad_end=p, dilation=d, ceil_mode=int(ceil_mode))
    if op == "avg_pool":
        params["count_include_pad"] = int(count_include_pad)
        ops.avg_pool(x, y=y, **params)
    else:
        ops.max_pool(x, out=(y, idx), **params)
    if unbatched:
        y, idx = y.squeeze(0), (idx.squeeze(0) if indices else None)
    return (y, idx) if indices else y


def max_pool1d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _pool("max_pool", x, 1, kernel_size, stride, padding, dilation, ceil_mode, indices=return_indices)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """torch's max_pool2d; return_indices gives int32 flat indices (torch: int64)."""
    return _pool("max_pool", x, 2, kernel_size, stride, padding, dilation, ceil_mode, indices=return_indices)


def max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _pool("max_pool", x, 3, kernel_size, stride, padding, dilation, ceil_mode, indices=return_indices)


def _avg(s):
    def fn(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
        if divisor_override is not None:
            raise NotImplementedError("avg_pool%dd: divisor_override is not implemented" % s)
        return _pool("avg_pool", x, s, kernel_size, stride, padding, 1, ceil_mode, count_include_pad)
    fn.__name__ = "avg_pool%dd" % s
    return fn


avg_pool1d, avg_pool2d, avg_pool3d = _avg(1), _avg(2), _avg(3)


def _adaptive(s):
    def fn(x, output_size):
        out = _tuple(output_size, s, "adaptive_avg_pool%dd output_size" % s)
        out = tuple(x.shape[2 + i] if o is None else o for i, o in enumerate(out))
        return ops.adaptive_avg_pool(x, y=x.device.empty(x.shape[:2] + out, x.dtype))
    fn.__name__ = "adaptive_avg_pool%dd" % s
    return fn


adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = _adaptive(1), _adaptive(2), _adaptive(3)


def interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """torch's interpolate for mode 'nearest' (1d/2d/3d) and 'bilinear' (4-D input)."""
    s = x.ndim - 2
    if mode not in ("nearest", "bilinear"):
        raise ValueError("interpolate: mode %r is not implemented (nearest, bilinear)" % (mode,))
    if mode == "nearest" and align_corners:
        raise ValueError("interpolate: align_corners only goes with bilinear (as torch)")
    if mode == "bilinear" and s != 2:
        raise ValueError("interpolate: bilinear takes a 4-D input (N, C, H, W), got shape %r" % (x.shape,))
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: pass exactly one of size and scale_factor")
    scales = [0.0] * s
    if size is not None:
        out = _tuple(size, s, "interpolate size")
    else:
        scales = [float(v) for v in ((scale_factor,) * s if np.isscalar(scale_factor) else scale_factor)]
        out = tuple(int(math.floor(i * f)) for i, f in zip(x.shape[2:], scales))
    y = x.device.empty(x.shape[:2] + out, x.dtype)
    op = ops.upsample_nearest if mode == "nearest" else ops.upsample_bilinear
    return op(x, y=y, align_corners=int(bool(align_corners)), scales=scales)


# --- attention ----------------------------------------------------------------------------------
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """torch's SDPA on (B, H, S, D) or (H, S, D) tensors. attn_mask: bool (True takes part) or
    additive float. Key/value heads may divide the query heads (grouped-query attention). A row
    with every key masked gives 0 (torch: NaN). dropout_p must be 0."""
    if dropout_p:
        raise NotImplementedError("scaled_dot_product_attention: dropout_p > 0 is not implemented")
    if is_causal and attn_mask is not None:
        raise ValueError("scaled_dot_product_attention: pass attn_mask or is_causal, not both (as torch)")
    squeeze = query.ndim == 3
    if squeeze:
        query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        if isinstance(attn_mask, Tensor) and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
    sq, skv = query.shape[2], key.shape[2]
    causal = 0
    if is_causal:  # torch's top-left triangle: causal 2 (ABI 1.3); the same as 1 when Sq == Skv
        causal = 1 if sq == skv else 2
    if attn_mask is not None and not isinstance(attn_mask, Tensor):
        attn_mask = query.device.tensor(np.asarray(attn_mask, np.bool_ if np.asarray(attn_mask).dtype == np.bool_
                                                   else query.dtype))
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    o = query.device.empty(query.shape[:3] + (value.shape[-1],), query.dtype)
    ops.attention(query, key, value, attn_mask, out=(o, None), causal=causal, scale=scale)
    return o.squeeze(0) if squeeze else o


# --- losses -------------------------------------------------------------------------------------
def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """torch's cross_entropy with class-index targets (int32; numpy int64 is converted). Class
    weights are not implemented (raise)."""
    if weight is not None:
        raise NotImplementedError("cross_entropy: class weights are not implemented")
    red = {"none": abi.TGL_REDUCTION_NONE, "mean": abi.TGL_REDUCTION_MEAN, "sum": abi.TGL_REDUCTION_SUM}
    if reduction not in red:
        raise ValueError("cross_entropy: reduction must be one of none, mean, sum; got %r" % (reduction,))
    target = _index(target, input)
    y = input.device.empty(target.shape if reduction == "none" else (), input.dtype)
    return ops.cross_entropy(input, target, loss=y, reduction=red[reduction], ignore_index=ignore_index,
                             label_smoothing=label_smoothing)


# Everything else (rms_norm's fused forms, linear_qkv, grouped/quantized linear, rope, fft,
# selective_scan, sample, the backward ops, ...) is tensorgl.ops.<abi name>, re-exported by the
# package where PyTorch has no function of that name.


# Tensor methods as in torch (t.sum(dim=1), t.softmax(-1), t.exp(), ...): the functions above.
def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


for _name in ("sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "logsumexp", "var", "std",
              "norm", "any", "all", "cumsum", "cumprod", "softmax", "log_softmax", "relu", "sigmoid", "tanh", "exp",
              "log", "sqrt", "rsqrt", "sin", "cos", "floor", "ceil", "round", "trunc", "sign", "clamp", "matmul",
              "flip", "roll", "tile", "gather", "index_select", "topk", "sort", "argsort", "tril", "triu", "split"):
    setattr(Tensor, _name, _method(globals()[_name]))
del _name
