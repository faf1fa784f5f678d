"""tensorgl for Python: tensors on OpenGL ES 3.1 compute (or the CPU reference plugin), numpy and
DLPack in and out, every op of the ABI.

    import numpy as np
    import tensorgl as tg

    with tg.Device("gles") as dev:                 # the first GLES device
        x = dev.tensor(np.random.rand(4, 8).astype(np.float32))
        w = dev.tensor(np.random.rand(16, 8).astype(np.float32))
        y = tg.softmax(tg.linear(x, w), dim=-1)    # like torch.nn.functional
        print(y.shape, y.dtype, y.numpy().sum(axis=-1))

Modules: tensorgl.functional (torch.nn.functional-like functions; all of them are also here),
tensorgl.ops (every ABI op by its ABI name, keyword params generated from plugin_api.h),
tensorgl.abi (the ctypes layer generated from plugin_api.h). libtensorgl is found through
$TENSORGL_LIB, the install this package belongs to, or the system's library path (see
tensorgl.Library). docs/python.md is the guide. tensorgl.onnx runs ONNX models through the ONNX runtime
(libtensorgl_runtime; an onnxruntime-like InferenceSession and an onnx Backend).
"""

from . import abi, functional, ops
from ._library import Library, Plugin, TensorGLError, default_library
from ._tensor import BLOCK_DTYPES, Device, Graph, Tensor, bfloat16, from_dlpack, numpy_dtype, tgl_dtype
from .functional import *  # noqa: F401,F403  (the torch-like functions)

__version__ = abi._abi.VERSION

# The ops PyTorch has no function for keep their ABI names here (rope, linear_qkv, sample, ...).
for _name in abi.OPS:
    if _name not in globals():
        globals()[_name] = getattr(ops, _name)
# The params structs by short name too (tgl_softmax_params is SoftmaxParams).
for _struct in abi.STRUCTS:
    if _struct.endswith("_params"):
        globals()[abi.camel(_struct)] = abi.STRUCTS[_struct]
del _name, _struct

status_name = abi.status_name


def plugins(library=None):
    """[(name, path)] of the plugins the loader finds, in search order."""
    return (library or default_library()).list_plugins()
