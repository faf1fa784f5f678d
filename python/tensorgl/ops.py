"""Every op of the ABI by its ABI name, generated from the op catalogue and the params structs of
plugin_api.h: tensorgl.ops.<name>(inputs..., <params fields>=..., out=...).

    ops.softmax(x, axis=-1, scale=0.5)            # tgl_softmax_params fields as keywords
    ops.layer_norm(x, gamma, beta, n_norm_dims=1, eps=1e-5)
    ops.conv2d(x, w, None, stride=(2, 2), groups=1, y=out)   # outputs by name, or out=

Inputs: positional, in the catalogue's order, or by operand name (x=, mask=, ...); None is an
absent optional operand. numpy arrays and numbers are uploaded to the device of the first tensor.
Params: no keyword at all passes NULL (the plugin's documented defaults); otherwise the struct
starts zeroed, as a C `{sizeof}` initializer, and the keywords set fields. A sequence for an array
field also sets its count field n_<field> when the struct has one (axes=(0, 2) sets n_axes=2).
params= takes a ready ctypes struct instead. Outputs: out= (a tensor or a tuple) or by operand
name; where an op's output shapes follow from its inputs (elementwise, normalization, scans,
same-shape gradients, ...) they are allocated when not given; other ops ask for them, and
tensorgl.functional computes them. Returns the output (one) or the tuple of outputs (None for an
absent optional one).
"""

import builtins
import ctypes

import numpy as np

from . import abi
from ._tensor import Tensor

__all__ = sorted(abi.OPS)

_PREDICATES = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
               "any", "all"}
# Ops whose every output has the shape (and, but for predicates, the dtype) of input 0, or of the
# inputs broadcast together.
_LIKE_INPUT0 = {"Unary", "Scan", "Normalize"}
_LIKE_INPUT0_OPS = {"contiguous", "tril", "triu", "fft", "ifft", "rope", "rope_backward", "softmax_backward",
                    "log_softmax_backward", "cumsum_backward", "layer_norm_backward", "rms_norm_backward"}
_GENERATED = {"arange", "full", "eye", "random_uniform", "random_normal"}


def _fields(op):
    return [f for f in abi._abi.STRUCTS[abi.OPS[op]["params"]]
            if f[0] != "struct_size" and not f[0].startswith("reserved")]


def make_params(op, **values):
    """The ctypes params struct of `op` with the given fields set (see the module docstring)."""
    info = abi.OPS[op]
    cls = abi.STRUCTS[info["params"]]
    p = cls()
    p.struct_size = ctypes.sizeof(cls)
    fields = {f[0]: f for f in _fields(op)}
    for key, value in values.items():
        if key not in fields:
            raise TypeError("%s: unknown keyword %r (params %s has: %s)"
                            % (op, key, info["params"], ", ".join(fields) or "no fields"))
        _, ctype, count = fields[key]
        if count:
            seq = [value] if np.isscalar(value) else list(value)
            if len(seq) > count:
                raise ValueError("%s: %s takes at most %d values, got %d" % (op, key, count, len(seq)))
            arr = getattr(p, key)
            for i, v in enumerate(seq):
                arr[i] = _scalar(v, ctype)
            n_key = "n_" + key
            if n_key in fields and n_key not in values:
                setattr(p, n_key, len(seq))
        else:
            if not np.isscalar(value) and not isinstance(value, bool):
                raise TypeError("%s: %s takes one number, got %r" % (op, key, value))
            setattr(p, key, _scalar(value, ctype))
    return p


def _scalar(v, ctype):
    return float(v) if ctype in ("float", "double") else int(v)


def _broadcast(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError("shapes %s do not broadcast" % ", ".join(map(str, shapes))) from None


def _infer_outputs(op, info, inputs, dtype, shape, device):
    """Allocated outputs where their shapes follow from the inputs; None where they do not."""
    fam = info["family"]
    n_out = info["min_outputs"]
    if op in _GENERATED:
        if shape is None:
            raise TypeError("ops.%s: pass shape= (the output's shape) or y=" % op)
        return [device.empty(shape, dtype or np.float32)]
    x = inputs[0] if inputs else None
    if x is None:
        return None
    if fam in ("Binary", "Ternary"):
        present = [t for t in inputs if t is not None]
        out_shape = _broadcast(*[t.shape for t in present])
        out_dtype = np.bool_ if op in _PREDICATES else (inputs[1].dtype if fam == "Ternary" else x.dtype)
        return [device.empty(out_shape, dtype or out_dtype)]
    if fam in _LIKE_INPUT0 or op in _LIKE_INPUT0_OPS:
        if op == "cast" and dtype is None:
            raise TypeError("ops.cast: pass dtype= (the output's dtype) or y=")
        out_dtype = dtype or (np.bool_ if op in _PREDICATES else x.dtype)
        outs = [device.empty(x.shape, out_dtype)]
        # Further outputs are optional (add_*_norm's sum, the norm gradients' dgamma/dbeta): absent.
        return outs + [None] * (n_out - 1)
    return None


def run(op, args, kwargs):
    """The keyword form of one op (what every tensorgl.ops.<name> calls)."""
    info = abi.OPS[op]
    in_names, out_names = info["inputs"], info["outputs"]
    out = kwargs.pop("out", None)
    params = kwargs.pop("params", None)
    dtype = kwargs.pop("dtype", None)
    shape = kwargs.pop("shape", None)
    device = kwargs.pop("device", None)
    # Variadic inputs (concat, stack) may come as one list.
    if info["min_inputs"] < len(in_names) and len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if len(args) > len(in_names):
        raise TypeError("ops.%s takes at most %d inputs (%s), got %d"
                        % (op, len(in_names), ", ".join(in_names), len(args)))
    inputs = list(args)
    outputs = []
    for name in list(kwargs):
        if name in in_names:
            i = in_names.index(name)
            inputs.extend([None] * (i + 1 - len(inputs)))
            inputs[i] = kwargs.pop(name)
        elif name in out_names:
            i = out_names.index(name)
            outputs.extend([None] * (i + 1 - len(outputs)))
            outputs[i] = kwargs.pop(name)
    if out is not None:
        if outputs:
            raise TypeError("ops.%s: pass the outputs either as out= or by name, not both" % op)
        outputs = list(out) if isinstance(out, (list, tuple)) else [out]
    p = params if params is not None else (make_params(op, **kwargs) if kwargs else None)
    if params is not None and kwargs:
        raise TypeError("ops.%s: pass params= or params keywords (%s), not both" % (op, ", ".join(kwargs)))

    if device is None:
        device = next((t.device for t in inputs + outputs if isinstance(t, Tensor)), None)
    if device is None:
        raise TypeError("ops.%s: no tensor among the operands: pass device=" % op)
    inputs = [t if t is None or isinstance(t, Tensor) else device.tensor(t) for t in inputs]
    if len(inputs) < info["min_inputs"]:
        missing = [n for i, n in enumerate(in_names[:info["min_inputs"]])
                   if i >= len(inputs) and n not in info["optional"]]
        if missing:
            raise TypeError("ops.%s: missing input(s) %s (inputs: %s; optional: %s)"
                            % (op, ", ".join(missing), ", ".join(in_names), ", ".join(info["optional"]) or "none"))
        inputs.extend([None] * (info["min_inputs"] - len(inputs)))
    required_out = [n for n in out_names[:info["min_outputs"]] if n not in info["optional"]]
    if builtins.any(i >= len(outputs) or outputs[i] is None for i, n in enumerate(out_names) if n in required_out):
        inferred = _infer_outputs(op, info, inputs, dtype, shape, device)
        if inferred is None:
            raise TypeError("ops.%s does not infer its outputs (%s): pass them as out=(...) or by name "
                            "(%s=...); tensorgl.functional computes their shapes for the ops PyTorch has"
                            % (op, ", ".join(out_names), out_names[0]))
        given = outputs + [None] * (len(inferred) - len(outputs))
        outputs = [g if g is not None else f for g, f in zip(given, inferred)]
    if len(outputs) < info["min_outputs"]:
        outputs.extend([None] * (info["min_outputs"] - len(outputs)))
    device.run_op(op, inputs, outputs, p)
    return outputs[0] if len(out_names) == 1 else tuple(outputs)


def _make(op):
    info = abi.OPS[op]
    fields = ", ".join("%s%s" % (f[0], "[%d]" % f[2] if f[2] else "") for f in _fields(op))

    def fn(*args, **kwargs):
        return run(op, args, kwargs)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = ("ABI op %s (id %d, %s family): inputs (%s) -> outputs (%s)%s; params %s: %s.\n"
                  "See plugin_api.h (TGL_OP_%s) for its semantics and tensorgl.ops for the calling rules."
                  % (op, info["id"], info["family"], ", ".join(info["inputs"]), ", ".join(info["outputs"]),
                     "; optional: " + ", ".join(info["optional"]) if info["optional"] else "",
                     info["params"], fields or "none", op.upper()))
    return fn


for _op in abi.OPS:
    globals()[_op] = _make(_op)
del _op
