"""tensorgl for Python: a small ctypes binding over libtensorgl (the plugin loader).

It mirrors the C ABI of tensorgl/plugin_api.h (structs, function table, status codes, dtypes, op
ids) and adds a thin object layer with numpy helpers:

    import numpy as np, tensorgl
    lib = tensorgl.Library()                      # $TENSORGL_LIB, or a path: Library("/x/libtensorgl.so")
    plugin = lib.load_plugin("gles")              # or "cpu", or a path to a plugin file
    print(plugin.device_properties(0)["renderer"])
    with plugin.open_device(0) as dev:
        a = dev.from_numpy(np.ones((2, 3), np.float32))
        b = dev.from_numpy(np.arange(3, dtype=np.float32))
        y = dev.add(a, b)                         # broadcasting, like numpy
        print(y.numpy())

Every call is checked: a status other than TGL_OK raises TensorGLError, which carries the status
code, its name (e.g. "TGL_ERROR_SHAPE_MISMATCH") and the plugin's (or loader's) own message.

The ctypes layouts are checked at import time against the layout pins (static asserts) at the end
of plugin_api.h; a mismatch raises ImportError naming the struct and field.
"""

import ctypes
import ctypes.util
import os

import numpy as np

__all__ = [
    "Tensor", "OpCaps", "PluginInfo", "Property", "UnaryParams", "GeluParams", "BinaryParams",
    "ReduceParams", "MatmulParams", "PluginApi", "TensorGLError", "Library", "Plugin", "Device",
    "Buffer", "DeviceTensor", "status_name", "STATUS_NAMES", "load_library",
]

# ------------------------------------------------------------------------------------------------
# Constants of plugin_api.h (values are fixed by the ABI).
# ------------------------------------------------------------------------------------------------
ABI_MAJOR = 1
ABI_MINOR = 2
MAX_RANK = 8
MAX_OP_INPUTS = 8
MAX_OP_OUTPUTS = 4

# Status codes (tgl_status).
TGL_OK = 0
TGL_ERROR_INVALID_ARGUMENT = 1
TGL_ERROR_NULL_POINTER = 2
TGL_ERROR_INVALID_HANDLE = 3
TGL_ERROR_STALE_HANDLE = 4
TGL_ERROR_DTYPE_MISMATCH = 5
TGL_ERROR_SHAPE_MISMATCH = 6
TGL_ERROR_AXIS_OUT_OF_RANGE = 7
TGL_ERROR_RANK_TOO_LARGE = 8
TGL_ERROR_SIZE_OVERFLOW = 9
TGL_ERROR_OUT_OF_BOUNDS = 10
TGL_ERROR_PARAMS_SIZE = 11
TGL_ERROR_UNKNOWN_OP = 12
TGL_ERROR_UNIMPLEMENTED = 13
TGL_ERROR_RESOURCE_EXHAUSTED = 14
TGL_ERROR_DEVICE_UNAVAILABLE = 15
TGL_ERROR_BACKEND_FAILURE = 16
TGL_ERROR_INTERNAL = 17
TGL_ERROR_VERSION_MISMATCH = 18
TGL_ERROR_INDEX_OUT_OF_RANGE = 19
# Loader statuses (returned by libtensorgl, never by a plugin).
TGL_ERROR_PLUGIN_NOT_FOUND = 32
TGL_ERROR_PLUGIN_INSECURE = 33
TGL_ERROR_PLUGIN_NOT_LOADABLE = 34
TGL_ERROR_PLUGIN_NO_ENTRY = 35
TGL_ERROR_PLUGIN_INIT_FAILED = 36
TGL_ERROR_PLUGIN_ABI_MISMATCH = 37
TGL_ERROR_PLUGIN_BAD_TABLE = 38
TGL_ERROR_PLUGIN_DUPLICATE = 39

STATUS_NAMES = {code: name for name, code in list(globals().items())
                if name.startswith("TGL_") and isinstance(code, int)}
__all__ += list(STATUS_NAMES.values())


def status_name(status):
    """Short name of a status code, e.g. "TGL_ERROR_SHAPE_MISMATCH" (as tgl_status_name())."""
    return STATUS_NAMES.get(int(status), "TGL_ERROR_(unknown status)")


# Element types.
DTYPE_INVALID = 0
DTYPE_F32 = 1
DTYPE_F16 = 2
DTYPE_BF16 = 3
DTYPE_I32 = 4
DTYPE_I8 = 5
DTYPE_U8 = 6
DTYPE_BOOL = 7
DTYPE_NAMES = {0: "invalid", 1: "f32", 2: "f16", 3: "bf16", 4: "i32", 5: "i8", 6: "u8", 7: "bool"}
_DTYPE_SIZES = {1: 4, 2: 2, 3: 2, 4: 4, 5: 1, 6: 1, 7: 1}
# numpy equivalents (bf16 has none in numpy).
_NUMPY_TO_DTYPE = {
    np.dtype(np.float32): DTYPE_F32,
    np.dtype(np.float16): DTYPE_F16,
    np.dtype(np.int32): DTYPE_I32,
    np.dtype(np.int8): DTYPE_I8,
    np.dtype(np.uint8): DTYPE_U8,
    np.dtype(np.bool_): DTYPE_BOOL,
}
_DTYPE_TO_NUMPY = {v: k for k, v in _NUMPY_TO_DTYPE.items()}


def dtype_size(dtype):
    """Bytes per element of a tensorgl dtype (0 for an unknown one), as tgl_dtype_size()."""
    return _DTYPE_SIZES.get(int(dtype), 0)


def dtype_bit(dtype):
    """Bit of a dtype in the masks of tgl_op_caps (TGL_DTYPE_BIT)."""
    return 1 << int(dtype)


def to_tgl_dtype(np_dtype):
    """tensorgl dtype id of a numpy dtype; ValueError if tensorgl has no such dtype."""
    dt = np.dtype(np_dtype)
    try:
        return _NUMPY_TO_DTYPE[dt]
    except KeyError:
        raise ValueError("numpy dtype %s has no tensorgl equivalent (expected one of: %s)"
                         % (dt, ", ".join(str(d) for d in _NUMPY_TO_DTYPE))) from None


def to_numpy_dtype(dtype):
    """numpy dtype of a tensorgl dtype id; ValueError for bf16 and unknown ids."""
    try:
        return _DTYPE_TO_NUMPY[int(dtype)]
    except KeyError:
        raise ValueError("tensorgl dtype %d (%s) has no numpy equivalent"
                         % (dtype, DTYPE_NAMES.get(int(dtype), "unknown"))) from None


# Op ids of the ABI 1.0 catalogue by name (plugin_api.h's TGL_OP_*); each is also a module constant
# OP_<NAME>. Whether a plugin implements one: Plugin.query_op(id)["supported"].
OPS = {
    "abs": 100, "neg": 101, "relu": 102, "sigmoid": 103, "tanh": 104, "exp": 105, "log": 106,
    "sqrt": 107, "gelu": 108, "silu": 109, "sign": 110, "leaky_relu": 111, "elu": 112,
    "selu": 113, "celu": 114, "hardsigmoid": 115, "hardswish": 116, "softplus": 117, "mish": 118,
    "expm1": 119, "log1p": 120, "rsqrt": 121, "reciprocal": 122, "square": 123, "sin": 124,
    "cos": 125, "erf": 126, "floor": 127, "ceil": 128, "round": 129, "trunc": 130, "clamp": 131,
    "logical_not": 132, "add": 200, "sub": 201, "mul": 202, "div": 203, "maximum": 204,
    "minimum": 205, "pow": 206, "fmod": 207, "remainder": 208, "atan2": 209, "logical_and": 210,
    "logical_or": 211, "logical_xor": 212, "eq": 213, "ne": 214, "lt": 215, "le": 216, "gt": 217,
    "ge": 218, "where": 250, "sum": 300, "mean": 301, "max": 302, "min": 303, "prod": 304,
    "argmax": 305, "argmin": 306, "logsumexp": 307, "var": 308, "std": 309, "any": 310,
    "all": 311, "norm": 312, "cumsum": 313, "cumprod": 314, "matmul": 400, "cast": 500,
    "softmax": 600, "log_softmax": 601, "layer_norm": 602, "rms_norm": 603, "group_norm": 604,
    "batch_norm": 605, "add_layer_norm": 606, "add_rms_norm": 607, "contiguous": 700,
    "concat": 701, "pad": 702, "tile": 703, "roll": 704, "permute": 705, "reshape": 706,
    "slice": 707, "narrow": 708, "split": 709, "stack": 710, "expand": 711, "flip": 712,
    "gather": 800, "index_select": 801, "scatter": 802, "scatter_add": 803, "one_hot": 804,
    "topk": 900, "sort": 901, "argsort": 902, "arange": 1000, "full": 1001, "eye": 1002,
    "tril": 1003, "triu": 1004, "random_uniform": 1005, "random_normal": 1006,
}
globals().update({"OP_" + name.upper(): op for name, op in OPS.items()})
GELU_ERF, GELU_TANH = 0, 1

CAP_STRIDED = 1 << 0
CAP_BROADCAST = 1 << 1
CAP_STRIDED_OUTPUT = 1 << 2

_UNARY_OPS = {"abs": OP_ABS, "neg": OP_NEG, "relu": OP_RELU, "sigmoid": OP_SIGMOID,
              "tanh": OP_TANH, "exp": OP_EXP, "log": OP_LOG, "sqrt": OP_SQRT, "gelu": OP_GELU,
              "silu": OP_SILU}
_BINARY_OPS = {"add": OP_ADD, "sub": OP_SUB, "mul": OP_MUL, "div": OP_DIV,
               "maximum": OP_MAXIMUM, "minimum": OP_MINIMUM, "pow": OP_POW}
_REDUCE_OPS = {"sum": OP_SUM, "mean": OP_MEAN, "max": OP_MAX, "min": OP_MIN, "prod": OP_PROD}

# ------------------------------------------------------------------------------------------------
# ABI structs.
# ------------------------------------------------------------------------------------------------
_c_status = ctypes.c_int32
_c_dtype = ctypes.c_uint32
_c_op = ctypes.c_uint32
_c_device = ctypes.c_uint64
_c_buffer = ctypes.c_uint64
_c_graph = ctypes.c_uint64


class Tensor(ctypes.Structure):
    """tgl_tensor: a view into a buffer (strides in elements)."""
    _fields_ = [
        ("buffer", _c_buffer),
        ("byte_offset", ctypes.c_uint64),
        ("dtype", _c_dtype),
        ("rank", ctypes.c_uint32),
        ("shape", ctypes.c_int64 * MAX_RANK),
        ("strides", ctypes.c_int64 * MAX_RANK),
    ]

    @classmethod
    def contiguous(cls, buffer, byte_offset, dtype, shape):
        """Row-major view, as tgl_tensor_contiguous()."""
        shape = tuple(int(d) for d in shape)
        if len(shape) > MAX_RANK:
            raise ValueError("shape %r has rank %d; tensorgl allows at most %d"
                             % (shape, len(shape), MAX_RANK))
        t = cls()
        t.buffer = buffer
        t.byte_offset = byte_offset
        t.dtype = dtype
        t.rank = len(shape)
        stride = 1
        for d in range(len(shape) - 1, -1, -1):
            t.shape[d] = shape[d]
            t.strides[d] = stride
            stride *= shape[d] if shape[d] > 0 else 1
        return t


class UnaryParams(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("reserved", ctypes.c_uint32)]


class GeluParams(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("approximate", ctypes.c_uint32)]


class BinaryParams(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("reserved", ctypes.c_uint32)]


class ReduceParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("keepdims", ctypes.c_uint32),
        ("n_axes", ctypes.c_uint32),
        ("axes", ctypes.c_int32 * MAX_RANK),
        ("reserved", ctypes.c_uint32),
    ]


class MatmulParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("transpose_a", ctypes.c_uint32),
        ("transpose_b", ctypes.c_uint32),
        ("alpha", ctypes.c_float),
        ("beta", ctypes.c_float),
        ("reserved", ctypes.c_uint32),
    ]



# The params structs of the other ops (plugin_api.h documents each field). Leave struct_size 0:
# Device.run_op fills it in.
def _params(name, fields, doc):
    cls = type(name, (ctypes.Structure,), {"_fields_": [("struct_size", ctypes.c_uint32)] + fields,
                                            "__doc__": doc})
    return cls


_i32x8 = ctypes.c_int32 * MAX_RANK
_i64x8 = ctypes.c_int64 * MAX_RANK
_u32, _i32, _i64, _u64, _f32, _f64 = (ctypes.c_uint32, ctypes.c_int32, ctypes.c_int64,
                                       ctypes.c_uint64, ctypes.c_float, ctypes.c_double)
LeakyReluParams = _params("LeakyReluParams", [("negative_slope", _f32)], "tgl_leaky_relu_params")
EluParams = _params("EluParams", [("alpha", _f32)], "tgl_elu_params (elu, celu)")
SoftplusParams = _params("SoftplusParams", [("beta", _f32), ("threshold", _f32), ("reserved", _u32)],
                         "tgl_softplus_params")
ClampParams = _params("ClampParams", [("min", _f32), ("max", _f32), ("reserved", _u32)],
                      "tgl_clamp_params")
ArgReduceParams = _params("ArgReduceParams", [("axis", _i32), ("keepdims", _u32), ("reserved", _u32)],
                          "tgl_arg_reduce_params (argmax, argmin)")
VarParams = _params("VarParams", [("keepdims", _u32), ("n_axes", _u32), ("axes", _i32x8),
                                  ("correction", _f32)], "tgl_var_params (var, std)")
VectorNormParams = _params("VectorNormParams", [("keepdims", _u32), ("n_axes", _u32), ("axes", _i32x8),
                                                ("ord", _f32)], "tgl_vector_norm_params")
ScanParams = _params("ScanParams", [("axis", _i32), ("exclusive", _u32), ("reverse", _u32)],
                     "tgl_scan_params (cumsum, cumprod)")
SoftmaxParams = _params("SoftmaxParams", [("axis", _i32), ("scale", _f32), ("reserved", _u32)],
                        "tgl_softmax_params")
LayerNormParams = _params("LayerNormParams", [("n_norm_dims", _u32), ("eps", _f32), ("reserved", _u32)],
                          "tgl_layer_norm_params (layer_norm, rms_norm, add_layer_norm, add_rms_norm)")
GroupNormParams = _params("GroupNormParams", [("num_groups", _u32), ("eps", _f32), ("reserved", _u32)],
                          "tgl_group_norm_params")
BatchNormParams = _params("BatchNormParams", [("eps", _f32)], "tgl_batch_norm_params")
PermuteParams = _params("PermuteParams", [("perm", _i32x8), ("reserved", _u32)], "tgl_permute_params")
SliceParams = _params("SliceParams", [("axis", _i32), ("start", _i64), ("stop", _i64), ("step", _i64)],
                      "tgl_slice_params")
NarrowParams = _params("NarrowParams", [("axis", _i32), ("start", _i64), ("length", _i64)],
                       "tgl_narrow_params")
AxisParams = _params("AxisParams", [("axis", _i32)],
                     "tgl_axis_params (concat, split, stack, gather, index_select, scatter, scatter_add)")
FlipParams = _params("FlipParams", [("n_axes", _u32), ("axes", _i32x8)], "tgl_flip_params")
PadParams = _params("PadParams", [("mode", _u32), ("value", _f64), ("before", _i64x8), ("after", _i64x8)],
                    "tgl_pad_params")
RollParams = _params("RollParams", [("n_axes", _u32), ("axes", _i32x8), ("shifts", _i64x8)],
                     "tgl_roll_params")
SortParams = _params("SortParams", [("axis", _i32), ("descending", _u32), ("reserved", _u32)],
                     "tgl_sort_params (topk, sort, argsort)")
ArangeParams = _params("ArangeParams", [("reserved", _u32), ("start", _f64), ("step", _f64)],
                       "tgl_arange_params")
FullParams = _params("FullParams", [("reserved", _u32), ("value", _f64)], "tgl_full_params")
DiagonalParams = _params("DiagonalParams", [("diagonal", _i32)], "tgl_diagonal_params (eye, tril, triu)")
RandomParams = _params("RandomParams", [("reserved", _u32), ("seed", _u64), ("offset", _u64), ("a", _f32),
                                        ("b", _f32)], "tgl_random_params")
PAD_CONSTANT, PAD_REFLECT, PAD_REPLICATE = 0, 1, 2


class OpCaps(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("op", _c_op),
        ("name", ctypes.c_char_p),
        ("supported", ctypes.c_uint32),
        ("n_inputs", ctypes.c_uint32),
        ("n_outputs", ctypes.c_uint32),
        ("max_rank", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("params_size", ctypes.c_uint32),
        ("input_dtypes", ctypes.c_uint32 * MAX_OP_INPUTS),
        ("output_dtypes", ctypes.c_uint32 * MAX_OP_OUTPUTS),
    ]


class PluginInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("abi_major", ctypes.c_uint32),
        ("abi_minor", ctypes.c_uint32),
        ("negotiated_minor", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
        ("version", ctypes.c_char_p),
        ("description", ctypes.c_char_p),
    ]


class Property(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p)]


_P = ctypes.POINTER
_FN = ctypes.CFUNCTYPE


class PluginApi(ctypes.Structure):
    """tgl_plugin_api, the v1.1 function table (the loader's copy: members newer than the
    negotiated minor are NULL). Members are CFUNCTYPE callables."""
    _fields_ = [
        ("struct_size", ctypes.c_uint64),
        ("abi_major", ctypes.c_uint32),
        ("abi_minor", ctypes.c_uint32),
        # --- since 1.0 ---
        ("last_error_message", _FN(ctypes.c_char_p)),
        ("get_plugin_info", _FN(_c_status, _P(PluginInfo))),
        ("device_count", _FN(_c_status, _P(ctypes.c_uint32))),
        ("device_properties", _FN(_c_status, ctypes.c_uint32, _P(_P(Property)),
                                  _P(ctypes.c_uint32))),
        ("device_open", _FN(_c_status, ctypes.c_uint32, _P(_c_device))),
        ("device_close", _FN(_c_status, _c_device)),
        ("buffer_alloc", _FN(_c_status, _c_device, ctypes.c_uint64, _P(_c_buffer))),
        ("buffer_free", _FN(_c_status, _c_device, _c_buffer)),
        ("buffer_size", _FN(_c_status, _c_device, _c_buffer, _P(ctypes.c_uint64))),
        ("buffer_upload", _FN(_c_status, _c_device, _c_buffer, ctypes.c_uint64, ctypes.c_void_p,
                              ctypes.c_uint64)),
        ("buffer_download", _FN(_c_status, _c_device, _c_buffer, ctypes.c_uint64,
                                ctypes.c_void_p, ctypes.c_uint64)),
        ("buffer_copy", _FN(_c_status, _c_device, _c_buffer, ctypes.c_uint64, _c_buffer,
                            ctypes.c_uint64, ctypes.c_uint64)),
        ("buffer_fill", _FN(_c_status, _c_device, _c_buffer, ctypes.c_uint64, ctypes.c_uint64,
                            ctypes.c_void_p, ctypes.c_uint32)),
        ("query_op", _FN(_c_status, _c_op, _P(OpCaps))),
        ("run_op", _FN(_c_status, _c_device, _c_op, ctypes.c_void_p, _P(Tensor), ctypes.c_uint32,
                       _P(Tensor), ctypes.c_uint32)),
        ("synchronize", _FN(_c_status, _c_device)),
        # --- since 1.1 ---
        ("timer_begin", _FN(_c_status, _c_device)),
        ("timer_end", _FN(_c_status, _c_device, _P(ctypes.c_uint64), _P(ctypes.c_uint32))),
        # --- since 1.2 ---
        ("graph_begin", _FN(_c_status, _c_device)),
        ("graph_end", _FN(_c_status, _c_device, _P(_c_graph))),
        ("graph_replay", _FN(_c_status, _c_device, _c_graph)),
        ("graph_destroy", _FN(_c_status, _c_device, _c_graph)),
    ]


PLUGIN_API_SIZE_V1_0 = 16 + 16 * ctypes.sizeof(ctypes.c_void_p)
PLUGIN_API_SIZE_V1_1 = 16 + 18 * ctypes.sizeof(ctypes.c_void_p)
PLUGIN_API_SIZE_V1_2 = 16 + 22 * ctypes.sizeof(ctypes.c_void_p)


def _check_layouts():
    """The layout pins of plugin_api.h (LP64), checked against the ctypes mirrors."""
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return  # the header pins layouts for LP64 only
    pins = [
        (Tensor, None, 152), (Tensor, "byte_offset", 8), (Tensor, "dtype", 16),
        (Tensor, "rank", 20), (Tensor, "shape", 24), (Tensor, "strides", 88),
        (UnaryParams, None, 8),
        (GeluParams, None, 8), (GeluParams, "approximate", 4),
        (BinaryParams, None, 8),
        (ReduceParams, None, 48), (ReduceParams, "n_axes", 8), (ReduceParams, "axes", 12),
        (MatmulParams, None, 24), (MatmulParams, "alpha", 12), (MatmulParams, "beta", 16),
        (LeakyReluParams, None, 8), (LeakyReluParams, "negative_slope", 4),
        (EluParams, None, 8), (EluParams, "alpha", 4),
        (SoftplusParams, None, 16), (SoftplusParams, "threshold", 8),
        (ClampParams, None, 16), (ClampParams, "max", 8),
        (ArgReduceParams, None, 16), (ArgReduceParams, "keepdims", 8),
        (VarParams, None, 48), (VarParams, "correction", 44),
        (VectorNormParams, None, 48), (VectorNormParams, "ord", 44),
        (ScanParams, None, 16), (ScanParams, "reverse", 12),
        (SoftmaxParams, None, 16), (LayerNormParams, None, 16), (LayerNormParams, "eps", 8),
        (GroupNormParams, None, 16), (BatchNormParams, None, 8), (PermuteParams, None, 40),
        (SliceParams, None, 32), (SliceParams, "start", 8), (NarrowParams, None, 24),
        (AxisParams, None, 8), (FlipParams, None, 40),
        (PadParams, None, 144), (PadParams, "value", 8), (PadParams, "after", 80),
        (RollParams, None, 104), (RollParams, "shifts", 40), (SortParams, None, 16),
        (ArangeParams, None, 24), (FullParams, None, 16), (DiagonalParams, None, 8),
        (RandomParams, None, 32), (RandomParams, "a", 24),
        (OpCaps, None, 88), (OpCaps, "name", 8), (OpCaps, "supported", 16),
        (OpCaps, "input_dtypes", 40), (OpCaps, "output_dtypes", 72),
        (PluginInfo, None, 40), (PluginInfo, "name", 16),
        (Property, None, 16),
        (PluginApi, None, PLUGIN_API_SIZE_V1_2),
        (PluginApi, "last_error_message", 16), (PluginApi, "synchronize", 16 + 15 * 8),
        (PluginApi, "timer_begin", PLUGIN_API_SIZE_V1_0), (PluginApi, "timer_end", 16 + 17 * 8),
        (PluginApi, "graph_begin", PLUGIN_API_SIZE_V1_1), (PluginApi, "graph_destroy", 16 + 21 * 8),
    ]
    for struct, field, expected in pins:
        if field is None:
            got, what = ctypes.sizeof(struct), "sizeof(%s)" % struct.__name__
        else:
            got, what = getattr(struct, field).offset, "offsetof(%s, %s)" % (struct.__name__, field)
        if got != expected:
            raise ImportError("tensorgl ctypes layout does not match plugin_api.h: %s is %d, the "
                              "header pins %d" % (what, got, expected))


_check_layouts()


# ------------------------------------------------------------------------------------------------
# Errors.
# ------------------------------------------------------------------------------------------------
class TensorGLError(RuntimeError):
    """A tensorgl call returned a status other than TGL_OK.

    Attributes: status (int), status_name (e.g. "TGL_ERROR_SHAPE_MISMATCH"), message (the
    plugin's or loader's message), function (the C function that failed)."""

    def __init__(self, status, message, function):
        self.status = int(status)
        self.status_name = status_name(status)
        self.message = message
        self.function = function
        super().__init__("%s failed: %s (%d): %s"
                         % (function, self.status_name, self.status, message))


def _decode(b):
    return b.decode("utf-8", "replace") if b is not None else None


# ------------------------------------------------------------------------------------------------
# The loader library.
# ------------------------------------------------------------------------------------------------
def _find_library_path(path):
    if path:
        return path
    env = os.environ.get("TENSORGL_LIB")
    if env:
        return env
    found = ctypes.util.find_library("tensorgl")
    if found:
        return found
    raise OSError("libtensorgl not found: pass its path to tensorgl.Library(path) or set "
                  "TENSORGL_LIB=/path/to/libtensorgl.so (e.g. <build>/lib/libtensorgl.so)")


class Library:
    """libtensorgl, loaded with ctypes. path: the library file; default $TENSORGL_LIB, then the
    system's search for "tensorgl"."""

    def __init__(self, path=None):
        self.path = _find_library_path(path)
        try:
            lib = ctypes.CDLL(self.path)
        except OSError as e:
            raise OSError("cannot load libtensorgl from %r: %s" % (self.path, e)) from None
        self._lib = lib
        lib.tgl_plugin_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.tgl_plugin_load.restype = _c_status
        lib.tgl_plugin_release.argtypes = [ctypes.c_void_p]
        lib.tgl_plugin_release.restype = None
        lib.tgl_plugin_get_api.argtypes = [ctypes.c_void_p]
        lib.tgl_plugin_get_api.restype = ctypes.POINTER(PluginApi)
        lib.tgl_plugin_abi_minor.argtypes = [ctypes.c_void_p]
        lib.tgl_plugin_abi_minor.restype = ctypes.c_uint32
        lib.tgl_plugin_path.argtypes = [ctypes.c_void_p]
        lib.tgl_plugin_path.restype = ctypes.c_char_p
        lib.tgl_plugin_name.argtypes = [ctypes.c_void_p]
        lib.tgl_plugin_name.restype = ctypes.c_char_p
        lib.tgl_loader_last_error.argtypes = []
        lib.tgl_loader_last_error.restype = ctypes.c_char_p
        lib.tgl_plugin_list.argtypes = [ctypes.POINTER(ctypes.c_char_p),
                                        ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                        ctypes.POINTER(ctypes.c_size_t)]
        lib.tgl_plugin_list.restype = _c_status
        lib.tgl_device_property.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p]
        lib.tgl_device_property.restype = ctypes.c_char_p

    def _check(self, status, function):
        if status != TGL_OK:
            raise TensorGLError(status, _decode(self._lib.tgl_loader_last_error()) or "", function)

    def load_plugin(self, name_or_path):
        """Loads a plugin by name ("gles", "cpu") or by path; returns a Plugin."""
        handle = ctypes.c_void_p()
        st = self._lib.tgl_plugin_load(os.fsencode(name_or_path), ctypes.byref(handle))
        self._check(st, "tgl_plugin_load(%r)" % (name_or_path,))
        return Plugin(self, handle)

    def list_plugins(self):
        """[(name, path)] of the plugin files on the search path, in search order."""
        count = ctypes.c_size_t()
        self._check(self._lib.tgl_plugin_list(None, None, 0, ctypes.byref(count)),
                    "tgl_plugin_list")
        n = count.value
        if n == 0:
            return []
        names = (ctypes.c_char_p * n)()
        paths = (ctypes.c_char_p * n)()
        self._check(self._lib.tgl_plugin_list(names, paths, n, ctypes.byref(count)),
                    "tgl_plugin_list")
        n = min(n, count.value)
        return [(_decode(names[i]), _decode(paths[i])) for i in range(n)]


def load_library(path=None):
    """Same as Library(path)."""
    return Library(path)


# ------------------------------------------------------------------------------------------------
# Plugins, devices, buffers.
# ------------------------------------------------------------------------------------------------
class Plugin:
    """A loaded plugin: its function table plus Pythonic wrappers."""

    def __init__(self, library, handle):
        self.library = library
        self._handle = handle
        api_ptr = library._lib.tgl_plugin_get_api(handle)
        if not api_ptr:
            raise TensorGLError(TGL_ERROR_INTERNAL, "the loader returned no function table for "
                                "a loaded plugin", "tgl_plugin_get_api")
        self.api = api_ptr.contents  # PluginApi; its members are callables
        self.path = _decode(library._lib.tgl_plugin_path(handle))
        self.name = _decode(library._lib.tgl_plugin_name(handle))
        self.abi_minor = library._lib.tgl_plugin_abi_minor(handle)

    def release(self):
        """Drops the host's reference (the library stays mapped; see loader.h)."""
        if self._handle:
            self.library._lib.tgl_plugin_release(self._handle)
            self._handle = None

    def last_error_message(self):
        return _decode(self.api.last_error_message()) or ""

    def check(self, status, function):
        """Raises TensorGLError with the plugin's message unless status is TGL_OK."""
        if status != TGL_OK:
            raise TensorGLError(status, self.last_error_message(), function)

    def info(self):
        """dict of tgl_plugin_info: name, version, description, abi_major/minor, negotiated."""
        pi = PluginInfo()
        pi.struct_size = ctypes.sizeof(PluginInfo)
        self.check(self.api.get_plugin_info(ctypes.byref(pi)), "get_plugin_info")
        return {
            "name": _decode(pi.name), "version": _decode(pi.version),
            "description": _decode(pi.description), "abi_major": pi.abi_major,
            "abi_minor": pi.abi_minor, "negotiated_minor": pi.negotiated_minor,
        }

    def device_count(self):
        n = ctypes.c_uint32()
        self.check(self.api.device_count(ctypes.byref(n)), "device_count")
        return n.value

    def device_properties(self, index=0):
        """dict name -> value of device `index`'s properties (in the plugin's order)."""
        props = ctypes.POINTER(Property)()
        n = ctypes.c_uint32()
        self.check(self.api.device_properties(index, ctypes.byref(props), ctypes.byref(n)),
                   "device_properties(%d)" % index)
        return {_decode(props[i].name): _decode(props[i].value) for i in range(n.value)}

    def query_op(self, op):
        """dict of tgl_op_caps for op id `op`."""
        caps = OpCaps()
        caps.struct_size = ctypes.sizeof(OpCaps)
        self.check(self.api.query_op(op, ctypes.byref(caps)), "query_op(%d)" % op)
        return {
            "op": caps.op, "name": _decode(caps.name), "supported": bool(caps.supported),
            "n_inputs": caps.n_inputs, "n_outputs": caps.n_outputs, "max_rank": caps.max_rank,
            "flags": caps.flags, "params_size": caps.params_size,
            "input_dtypes": list(caps.input_dtypes)[:caps.n_inputs],
            "output_dtypes": list(caps.output_dtypes)[:caps.n_outputs],
        }

    def open_device(self, index=0):
        dev = _c_device()
        self.check(self.api.device_open(index, ctypes.byref(dev)), "device_open(%d)" % index)
        return Device(self, dev.value, index)


class Buffer:
    """A device buffer (untyped bytes)."""

    def __init__(self, device, handle, nbytes):
        self.device = device
        self.handle = handle
        self.nbytes = nbytes

    def upload(self, data, offset=0):
        """Copies a contiguous numpy array (or bytes) into the buffer at byte `offset`."""
        if isinstance(data, (bytes, bytearray, memoryview)):
            data = np.frombuffer(data, dtype=np.uint8)
        arr = np.ascontiguousarray(data)
        d = self.device
        d.plugin.check(d.plugin.api.buffer_upload(d.handle, self.handle, offset,
                                                  arr.ctypes.data_as(ctypes.c_void_p), arr.nbytes),
                       "buffer_upload")

    def download(self, out=None, offset=0, nbytes=None):
        """Copies bytes out of the buffer: into `out` (a writable C-contiguous numpy array) or, if
        out is None, into new bytes of length nbytes (default: to the end of the buffer)."""
        d = self.device
        if out is not None:
            if not (isinstance(out, np.ndarray) and out.flags.c_contiguous and out.flags.writeable):
                raise ValueError("out must be a writable C-contiguous numpy array")
            d.plugin.check(d.plugin.api.buffer_download(
                d.handle, self.handle, offset, out.ctypes.data_as(ctypes.c_void_p), out.nbytes),
                "buffer_download")
            return out
        if nbytes is None:
            nbytes = self.nbytes - offset
        cbuf = ctypes.create_string_buffer(max(nbytes, 1))
        d.plugin.check(d.plugin.api.buffer_download(d.handle, self.handle, offset,
                                                    ctypes.cast(cbuf, ctypes.c_void_p), nbytes),
                       "buffer_download")
        return cbuf.raw[:nbytes]

    def free(self):
        if self.handle:
            d = self.device
            h, self.handle = self.handle, 0
            d.plugin.check(d.plugin.api.buffer_free(d.handle, h), "buffer_free")


class DeviceTensor:
    """A tensor on a device: a buffer (owned or shared) plus a tgl_tensor view of it."""

    def __init__(self, buffer, desc):
        self.buffer = buffer
        self.desc = desc

    @property
    def shape(self):
        return tuple(self.desc.shape[d] for d in range(self.desc.rank))

    @property
    def strides(self):
        return tuple(self.desc.strides[d] for d in range(self.desc.rank))

    @property
    def dtype(self):
        return self.desc.dtype

    @property
    def device(self):
        return self.buffer.device

    def numpy(self):
        """Downloads the tensor into a new numpy array (waits for queued work that writes it)."""
        np_dtype = to_numpy_dtype(self.desc.dtype)
        shape = self.shape
        esize = dtype_size(self.desc.dtype)
        if all(s == c for s, c in zip(self.strides, _contiguous_strides(shape))):
            out = np.empty(shape, dtype=np_dtype)
            if out.size:
                self.buffer.download(out, offset=self.desc.byte_offset)
            return out
        # A general view: download the byte range it spans, then index it with numpy.
        if any(s == 0 for s in shape):
            return np.empty(shape, dtype=np_dtype)
        lo = sum(min(0, (n - 1) * st) for n, st in zip(shape, self.strides))
        hi = sum(max(0, (n - 1) * st) for n, st in zip(shape, self.strides))
        flat = np.empty(hi - lo + 1, dtype=np_dtype)
        self.buffer.download(flat, offset=self.desc.byte_offset + lo * esize)
        view = np.lib.stride_tricks.as_strided(flat[-lo:], shape=shape,
                                               strides=[st * esize for st in self.strides])
        return np.array(view)

    def __repr__(self):
        return "DeviceTensor(shape=%r, dtype=%s, buffer=%#x)" % (
            self.shape, DTYPE_NAMES.get(self.desc.dtype, "?"), self.buffer.handle)


def _contiguous_strides(shape):
    strides, s = [], 1
    for n in reversed(shape):
        strides.append(s)
        s *= n if n > 0 else 1
    return tuple(reversed(strides))


class Device:
    """An open device of a plugin. Use as a context manager, or call close()."""

    def __init__(self, plugin, handle, index):
        self.plugin = plugin
        self.handle = handle
        self.index = index

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Waits for queued work and frees every buffer of the device (their handles go stale)."""
        if self.handle:
            h, self.handle = self.handle, 0
            self.plugin.check(self.plugin.api.device_close(h), "device_close")

    def synchronize(self):
        self.plugin.check(self.plugin.api.synchronize(self.handle), "synchronize")

    # --- buffers and tensors -------------------------------------------------------------------
    def alloc(self, nbytes):
        b = _c_buffer()
        self.plugin.check(self.plugin.api.buffer_alloc(self.handle, nbytes, ctypes.byref(b)),
                          "buffer_alloc(%d bytes)" % nbytes)
        return Buffer(self, b.value, nbytes)

    def empty(self, shape, dtype=np.float32):
        """A new contiguous tensor of `shape` (numpy dtype or tensorgl dtype id), unspecified
        contents."""
        tdt = dtype if isinstance(dtype, int) else to_tgl_dtype(dtype)
        shape = tuple(int(s) for s in shape)
        numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
        buf = self.alloc(max(numel * dtype_size(tdt), 0))
        return DeviceTensor(buf, Tensor.contiguous(buf.handle, 0, tdt, shape))

    def from_numpy(self, array):
        """Uploads a numpy array into a new contiguous tensor of the same shape and dtype."""
        arr = np.ascontiguousarray(array)
        t = self.empty(arr.shape, arr.dtype)
        if arr.nbytes:
            t.buffer.upload(arr)
        return t

    # --- ops -------------------------------------------------------------------------------------
    def run_op(self, op, inputs, outputs, params=None):
        """Queues op `op` (an id, or a name of OPS) on DeviceTensors or raw Tensor descriptors; None
        stands for an absent optional operand. params: a ctypes params struct (its struct_size is
        filled in when 0) or None for the defaults."""
        if isinstance(op, str):
            op = _lookup(OPS, op, "op")
        ins = (Tensor * max(len(inputs), 1))(*[_desc(t) for t in inputs])
        outs = (Tensor * max(len(outputs), 1))(*[_desc(t) for t in outputs])
        pptr = None
        if params is not None:
            if hasattr(params, "struct_size") and params.struct_size == 0:
                params.struct_size = ctypes.sizeof(params)
            pptr = ctypes.cast(ctypes.byref(params), ctypes.c_void_p)
        self.plugin.check(self.plugin.api.run_op(self.handle, op, pptr, ins, len(inputs), outs,
                                                 len(outputs)),
                          "run_op(%s)" % _op_name(op))

    def unary(self, name, x, out=None, approximate=None):
        """y = name(x) for name in abs, neg, relu, sigmoid, tanh, exp, log, sqrt, gelu, silu."""
        op = _lookup(_UNARY_OPS, name, "unary op")
        out = out if out is not None else self.empty(x.shape, x.dtype)
        params = None
        if op == OP_GELU and approximate is not None:
            params = GeluParams(ctypes.sizeof(GeluParams),
                                GELU_TANH if approximate in (True, "tanh", GELU_TANH) else GELU_ERF)
        self.run_op(op, [x], [out], params)
        return out

    def binary(self, name, a, b, out=None):
        """y = a <name> b with numpy broadcasting (add, sub, mul, div, maximum, minimum, pow)."""
        op = _lookup(_BINARY_OPS, name, "binary op")
        if out is None:
            out = self.empty(np.broadcast_shapes(a.shape, b.shape), a.dtype)
        self.run_op(op, [a, b], [out])
        return out

    def reduce(self, name, x, axes=None, keepdims=False, out=None):
        """y = name(x, axes) for sum, mean, max, min, prod; axes None reduces every axis."""
        op = _lookup(_REDUCE_OPS, name, "reduction")
        axes = () if axes is None else ((axes,) if isinstance(axes, int) else tuple(axes))
        if len(axes) > MAX_RANK:
            raise ValueError("at most %d axes, got %d" % (MAX_RANK, len(axes)))
        p = ReduceParams()
        p.struct_size = ctypes.sizeof(ReduceParams)
        p.keepdims = 1 if keepdims else 0
        p.n_axes = len(axes)
        for i, a in enumerate(axes):
            p.axes[i] = a
        if out is None:
            rank = len(x.shape)
            norm = set(range(rank)) if not axes else {a + rank if a < 0 else a for a in axes}
            if keepdims:
                oshape = tuple(1 if d in norm else n for d, n in enumerate(x.shape))
            else:
                oshape = tuple(n for d, n in enumerate(x.shape) if d not in norm)
            out = self.empty(oshape, x.dtype)
        self.run_op(op, [x], [out], p)
        return out

    def matmul(self, a, b, out=None, alpha=1.0, beta=0.0, transpose_a=False, transpose_b=False):
        """out = alpha * op(a) @ op(b) + beta * out (out is not read when beta == 0)."""
        p = MatmulParams(ctypes.sizeof(MatmulParams), int(bool(transpose_a)),
                         int(bool(transpose_b)), alpha, beta, 0)
        if out is None:
            sa, sb = a.shape, b.shape
            m = sa[-1] if transpose_a else sa[-2]
            n = sb[-2] if transpose_b else sb[-1]
            batch = np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2]))
            out = self.empty(tuple(batch) + (m, n), a.dtype)
        self.run_op(OP_MATMUL, [a, b], [out], p)
        return out

    # Shorthands.
    def add(self, a, b, out=None):
        return self.binary("add", a, b, out)

    def relu(self, x, out=None):
        return self.unary("relu", x, out)

    def sum(self, x, axes=None, keepdims=False, out=None):
        return self.reduce("sum", x, axes, keepdims, out)


def _desc(t):
    if t is None:
        return Tensor()  # buffer handle 0: an absent optional operand
    if isinstance(t, DeviceTensor):
        return t.desc
    if isinstance(t, Tensor):
        return t
    raise TypeError("expected a DeviceTensor or a tensorgl.Tensor, got %s" % type(t).__name__)


def _lookup(table, name, what):
    try:
        return table[name]
    except KeyError:
        raise ValueError("unknown %s %r (expected one of: %s)"
                         % (what, name, ", ".join(sorted(table)))) from None


_OP_NAMES = {v: k for k, v in OPS.items()}


def _op_name(op):
    return _OP_NAMES.get(op, str(op))
