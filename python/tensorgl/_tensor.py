"""Devices, tensors (strided views of device buffers), graphs, and DLPack/numpy exchange.

Lifetimes: a tensor's buffer is freed when the last tensor viewing it is garbage-collected
(weakref.finalize); a device is closed by close(), by the end of its `with` block, when it is
garbage-collected, or at interpreter exit. Closing a device frees every buffer and graph of it in
the plugin; the finalizers of its tensors then do nothing, so they are safe after a close and at
exit. A tensor used after its device was closed raises TensorGLError (TGL_ERROR_STALE_HANDLE,
"use after close").
"""

import contextlib
import ctypes
import threading
import weakref

import numpy as np

from . import abi
from ._library import Plugin, default_library

MAX_RANK = abi.TGL_MAX_RANK

# numpy <-> ABI dtypes. bfloat16 has no numpy dtype: such tensors report dtype "bfloat16" and
# convert to numpy through .to(np.float32).
_NP_TO_TGL = {
    np.dtype(np.float32): abi.TGL_DTYPE_F32, np.dtype(np.float16): abi.TGL_DTYPE_F16,
    np.dtype(np.int32): abi.TGL_DTYPE_I32, np.dtype(np.int8): abi.TGL_DTYPE_I8,
    np.dtype(np.uint8): abi.TGL_DTYPE_U8, np.dtype(np.bool_): abi.TGL_DTYPE_BOOL,
    np.dtype(np.int64): abi.TGL_DTYPE_I64, np.dtype(np.int16): abi.TGL_DTYPE_I16,
}
_TGL_TO_NP = {v: k for k, v in _NP_TO_TGL.items()}
bfloat16 = "bfloat16"
_ITEMSIZE = {abi.TGL_DTYPE_F32: 4, abi.TGL_DTYPE_F16: 2, abi.TGL_DTYPE_BF16: 2, abi.TGL_DTYPE_I32: 4,
             abi.TGL_DTYPE_I8: 1, abi.TGL_DTYPE_U8: 1, abi.TGL_DTYPE_BOOL: 1, abi.TGL_DTYPE_I64: 8,
             abi.TGL_DTYPE_I16: 2}
# The GGUF block dtypes (plugin_api.h): name -> (ABI id, elements per block, bytes per block). No
# numpy dtype: a block tensor is made from its raw bytes (Device.blocks) and read through ops
# (dequantize, linear, grouped_linear, index_select).
BLOCK_DTYPES = {"q4_0": (abi.TGL_DTYPE_Q4_0, 32, 18), "q4_1": (abi.TGL_DTYPE_Q4_1, 32, 20),
                "q5_0": (abi.TGL_DTYPE_Q5_0, 32, 22), "q5_1": (abi.TGL_DTYPE_Q5_1, 32, 24),
                "q8_0": (abi.TGL_DTYPE_Q8_0, 32, 34), "q4_K": (abi.TGL_DTYPE_Q4_K, 256, 144),
                "q5_K": (abi.TGL_DTYPE_Q5_K, 256, 176), "q6_K": (abi.TGL_DTYPE_Q6_K, 256, 210)}
_HINT = {np.dtype(np.float64): "float32", np.dtype(np.uint64): "int64", np.dtype(np.uint32): "int64",
         np.dtype(np.uint16): "int32"}


def tgl_dtype(dtype):
    """The ABI dtype id of a numpy dtype (or "bfloat16"); ValueError naming the supported ones."""
    if isinstance(dtype, str) and dtype in ("bfloat16", "bf16"):
        return abi.TGL_DTYPE_BF16
    try:
        dt = np.dtype(dtype)
        return _NP_TO_TGL[dt]
    except (TypeError, KeyError):
        hint = _HINT.get(dt) if "dt" in locals() else None
        raise ValueError("dtype %r has no tensorgl equivalent (supported: float32, float16, "
                         "bfloat16, int64, int32, int16, int8, uint8, bool)%s"
                         % (str(dtype), "; convert it to %s first" % hint if hint else "")) from None


def numpy_dtype(tgl):
    """numpy dtype of an ABI dtype id; "bfloat16" for bf16."""
    return _TGL_TO_NP.get(tgl, bfloat16 if tgl == abi.TGL_DTYPE_BF16 else None)


def contiguous_strides(shape):
    strides, s = [], 1
    for n in reversed(shape):
        strides.append(s)
        s *= n if n > 0 else 1
    return tuple(reversed(strides))


class _DeviceState:
    """What the finalizers of buffers and graphs need: no reference to any Python-level object, so
    they never keep a device alive and stay valid after it is closed."""

    def __init__(self, plugin, handle, index):
        self.api = plugin.api
        self.plugin_name = plugin.name
        self.handle = handle
        self.index = index
        self.closed = False
        self.live_bytes = 0
        self.lock = threading.Lock()


def _free_buffer(state, handle, nbytes):
    with state.lock:
        if state.closed:
            return  # device_close freed it already
        state.live_bytes -= nbytes
    state.api.buffer_free(state.handle, handle)  # a finalizer cannot raise; the status is moot


def _destroy_graph(state, handle):
    with state.lock:
        if state.closed:
            return
    state.api.graph_destroy(state.handle, handle)


def _close_device(state):
    with state.lock:
        if state.closed:
            return abi.TGL_OK
        state.closed = True
        state.live_bytes = 0
    return state.api.device_close(state.handle)


class _Buffer:
    """Device memory owned by the tensors that view it; freed when the last one is collected."""
    __slots__ = ("handle", "nbytes", "__weakref__")

    def __init__(self, state, handle, nbytes):
        self.handle = handle
        self.nbytes = nbytes
        weakref.finalize(self, _free_buffer, state, handle, nbytes)


class Device:
    """A device of a plugin: Device("gles"), Device("cpu", 1), Device("/path/libtensorgl-x.so").

    A context manager (closed at the end of the `with` block); also closed by close(), when
    garbage-collected, or at interpreter exit. library: a tensorgl.Library (default: the one
    found through $TENSORGL_LIB or the install, see tensorgl.Library)."""

    def __init__(self, plugin="gles", index=0, library=None):
        if not isinstance(plugin, Plugin):
            plugin = (library or default_library()).load_plugin(plugin)
        self.plugin = plugin
        self.index = int(index)
        handle = ctypes.c_uint64()
        plugin.check(plugin.api.device_open(self.index, ctypes.byref(handle)),
                     "device_open(%d) of plugin %r" % (self.index, plugin.name))
        self._state = _DeviceState(plugin, handle.value, self.index)
        self._finalizer = weakref.finalize(self, _close_device, self._state)

    # --- lifetime ---------------------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Waits for queued work, then frees every buffer and graph of the device. Tensors of it
        raise "use after close" from then on. A failure of queued work is raised here."""
        self._finalizer.detach()
        status = _close_device(self._state)
        self.plugin.check(status, "device_close")

    @property
    def closed(self):
        return self._state.closed

    @property
    def live_bytes(self):
        """Bytes of device buffers this binding allocated on the device and has not freed."""
        return self._state.live_bytes

    def __repr__(self):
        return "<tensorgl.Device %s:%d%s>" % (self.plugin.name, self.index,
                                               " (closed)" if self.closed else "")

    def check(self, status, function, op=None):
        self.plugin.check(status, function, op)

    @property
    def handle(self):
        return self._state.handle

    def properties(self):
        """{name: value} of the device (renderer, limits, ...), as the plugin reports them."""
        return self.plugin.device_properties(self.index)

    def synchronize(self):
        """Waits for every queued op; raises errors found on the device (e.g. indices out of range)."""
        self.check(self._state.api.synchronize(self.handle), "synchronize")

    # --- memory and tensors -----------------------------------------------------------------
    def _alloc(self, nbytes):
        b = ctypes.c_uint64()
        self.check(self._state.api.buffer_alloc(self.handle, nbytes, ctypes.byref(b)),
                   "buffer_alloc(%d bytes)" % nbytes)
        with self._state.lock:
            self._state.live_bytes += nbytes
        return _Buffer(self._state, b.value, nbytes)

    def empty(self, shape, dtype=np.float32):
        """A new contiguous tensor, contents unspecified. dtype: numpy dtype or "bfloat16"."""
        shape = _shape_tuple(shape)
        tdt = tgl_dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * _ITEMSIZE[tdt]
        return Tensor(self, self._alloc(nbytes), tdt, shape, contiguous_strides(shape), 0)

    def tensor(self, data, dtype=None):
        """Copies host data (a numpy array, anything numpy.asarray takes, or a DLPack host
        tensor) into a new contiguous tensor. Arrays keep their dtype (int64 and int16 included;
        float64 is refused: tensorgl has no 64-bit float; pass dtype= or convert); Python numbers
        and lists become float32 / int32 / bool. dtype converts on the host first."""
        if isinstance(data, Tensor):
            data = data.numpy()
        elif not isinstance(data, np.ndarray) and hasattr(data, "__dlpack__"):
            data = np.from_dlpack(data)
        if isinstance(dtype, str) and dtype in (bfloat16, "bf16"):
            return self.tensor(data, np.float32).to(bfloat16)
        arr = np.asarray(data, dtype=dtype)
        if dtype is None and not (isinstance(data, np.ndarray) or hasattr(data, "__array_interface__")):
            # Python numbers and lists: numpy's float64/int64 become tensorgl's float32/int32.
            arr = arr.astype({"f": np.float32, "i": np.int32, "u": np.int32}.get(arr.dtype.kind, arr.dtype))
        tgl_dtype(arr.dtype)  # a clear error before allocating
        arr = np.ascontiguousarray(arr)
        t = self.empty(arr.shape, arr.dtype)
        if arr.nbytes:
            self.check(self._state.api.buffer_upload(self.handle, t._buffer.handle, 0,
                                                     arr.ctypes.data_as(ctypes.c_void_p), arr.nbytes),
                       "buffer_upload")
        return t

    from_numpy = tensor

    def blocks(self, data, dtype, shape):
        """A tensor of a GGUF block dtype (BLOCK_DTYPES: "q4_0" ... "q6_K") from its raw bytes as
        a GGUF file stores them: shape (..., K), every row ceil(K / B) blocks, rows consecutive."""
        if dtype not in BLOCK_DTYPES:
            raise ValueError("dtype %r is not a block dtype (%s)" % (dtype, ", ".join(BLOCK_DTYPES)))
        tdt, block, block_bytes = BLOCK_DTYPES[dtype]
        shape = _shape_tuple(shape)
        if not shape:
            raise ValueError("a block tensor has rank >= 1 (rows of K); got shape ()")
        raw = np.frombuffer(bytes(data), np.uint8) if not isinstance(data, np.ndarray) else data.view(np.uint8).reshape(-1)
        row_blocks = -(-shape[-1] // block)
        rows = int(np.prod(shape[:-1], dtype=np.int64))
        if raw.nbytes != rows * row_blocks * block_bytes:
            raise ValueError("%s tensor of shape %s needs %d bytes (%d rows of %d blocks of %d bytes), got %d"
                             % (dtype, shape, rows * row_blocks * block_bytes, rows, row_blocks, block_bytes, raw.nbytes))
        strides, s = [1] * len(shape), row_blocks * block
        for d in range(len(shape) - 2, -1, -1):
            strides[d] = s
            s *= max(shape[d], 1)
        t = Tensor(self, self._alloc(max(raw.nbytes, 1)), tdt, shape, tuple(strides), 0)
        if raw.nbytes:
            raw = np.ascontiguousarray(raw)
            self.check(self._state.api.buffer_upload(self.handle, t._buffer.handle, 0,
                                                     raw.ctypes.data_as(ctypes.c_void_p), raw.nbytes),
                       "buffer_upload")
        return t

    def run_op(self, op, inputs, outputs, params=None):
        """Queues one op (ABI name or id) on Tensors (None: an absent optional operand, or a raw
        abi.tgl_tensor); params: a ctypes params struct (struct_size 0 is filled in) or None for
        the plugin's defaults. The keyword form is tensorgl.ops.<name>(...)."""
        name = op if isinstance(op, str) else abi.OP_NAMES.get(int(op), str(op))
        op_id = abi.OPS[op]["id"] if isinstance(op, str) else int(op)
        ins = (abi.tgl_tensor * max(len(inputs), 1))(*[self._desc(t, name) for t in inputs])
        outs = (abi.tgl_tensor * max(len(outputs), 1))(*[self._desc(t, name) for t in outputs])
        pptr = None
        if params is not None:
            if getattr(params, "struct_size", 1) == 0:
                params.struct_size = ctypes.sizeof(params)
            pptr = ctypes.cast(ctypes.byref(params), ctypes.c_void_p)
        self.check(self._state.api.run_op(self.handle, op_id, pptr, ins, len(inputs), outs, len(outputs)),
                   "run_op", name)

    def _desc(self, t, op):
        if t is None:
            return abi.tgl_tensor()  # buffer 0: an absent optional operand
        if isinstance(t, abi.tgl_tensor):
            return t
        if isinstance(t, Tensor):
            if t.device is not self:
                raise ValueError("%s: a tensor of %r given to an op on %r (copy it with "
                                 "device.tensor(t))" % (op, t.device, self))
            return t.desc()
        raise TypeError("%s: expected a tensorgl.Tensor or None, got %s" % (op, type(t).__name__))

    # --- graphs -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def record(self):
        """Records the ops run on this device inside the block into a Graph (ABI 1.2
        graph_begin/graph_end); graph.replay() queues them again on the same buffers. Transfers
        (tensor(), numpy()) act at once, as in C. Outputs allocated inside the block stay valid."""
        self.check(self._state.api.graph_begin(self.handle), "graph_begin")
        graph = Graph(self)
        try:
            yield graph
        finally:
            handle = ctypes.c_uint64()
            status = self._state.api.graph_end(self.handle, ctypes.byref(handle))
            if status == abi.TGL_OK:
                graph._set(handle.value)
        self.check(status, "graph_end")


class Graph:
    """A recorded sequence of ops (Device.record()); destroyed when collected or by its device's
    close."""

    def __init__(self, device):
        self.device = device
        self.handle = 0

    def _set(self, handle):
        self.handle = handle
        weakref.finalize(self, _destroy_graph, self.device._state, handle)

    def replay(self, *bindings):
        """Queues the recorded ops again (the data is whatever their buffers hold now). With
        bindings (ABI 1.3 graph_replay_with), this replay only runs some ops with other arguments:
        Graph.input / Graph.output (op_index, slot, tensor): the operand's buffer and byte offset
        become the tensor's (its recorded dtype, shape and strides stay: the tensor must have them);
        Graph.param(op_index, params_class, field, value): one field of the op's params struct.
        op_index counts the ops run while recording, from 0."""
        d = self.device
        if not self.handle:
            raise RuntimeError("graph_replay: the graph is still being recorded")
        if not bindings:
            d.check(d._state.api.graph_replay(d.handle, self.handle), "graph_replay")
            return
        if not d._state.api.graph_replay_with:
            raise RuntimeError("graph_replay_with: the plugin's negotiated ABI minor is below 3")
        array = (abi.tgl_graph_binding * len(bindings))(*bindings)
        d.check(d._state.api.graph_replay_with(d.handle, self.handle, array, len(bindings)), "graph_replay_with")

    @staticmethod
    def _operand(kind, op_index, slot, tensor):
        b = abi.tgl_graph_binding()
        b.struct_size = ctypes.sizeof(abi.tgl_graph_binding)
        b.kind, b.op_index, b.slot = kind, op_index, slot
        b.buffer, b.byte_offset = tensor._buffer.handle, tensor.byte_offset
        return b

    @staticmethod
    def input(op_index, slot, tensor):
        return Graph._operand(abi.TGL_GRAPH_BIND_INPUT, op_index, slot, tensor)

    @staticmethod
    def output(op_index, slot, tensor):
        return Graph._operand(abi.TGL_GRAPH_BIND_OUTPUT, op_index, slot, tensor)

    @staticmethod
    def param(op_index, params_class, field, value):
        """e.g. Graph.param(3, tensorgl.abi.tgl_sample_params, "seed", 7)."""
        where = getattr(params_class, field)  # the ctypes field: offset and size
        if where.size > 8:
            raise ValueError("%s.%s has %d bytes; a binding holds at most 8" % (params_class.__name__, field, where.size))
        struct = params_class()
        setattr(struct, field, value)
        b = abi.tgl_graph_binding()
        b.struct_size = ctypes.sizeof(abi.tgl_graph_binding)
        b.kind, b.op_index, b.slot, b.value_size = abi.TGL_GRAPH_BIND_PARAMS, op_index, where.offset, where.size
        ctypes.memmove(b.value, ctypes.addressof(struct) + where.offset, where.size)
        return b


def _shape_tuple(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if len(shape) > MAX_RANK:
        raise ValueError("shape %r has rank %d; tensorgl allows at most %d" % (shape, len(shape), MAX_RANK))
    if any(s < 0 for s in shape):
        raise ValueError("shape %r has a negative size" % (shape,))
    return shape


class Tensor:
    """A tensor on a device: a strided view (shape, strides, byte offset, dtype) of a buffer.

    numpy-like: dtype (a numpy dtype, or "bfloat16"), shape, strides (in BYTES, as numpy;
    stride() gives elements, as torch), ndim, size, nbytes; np.asarray(t) / t.numpy() copy to
    the host. Indexing with ints, slices (any step), None and ... gives views without a copy.
    Operators: + - * / @ ** and comparisons (elementwise, numpy broadcasting; comparisons give
    bool tensors)."""

    __array_ufunc__ = None  # numpy defers `ndarray + tensor` to Tensor.__radd__

    def __init__(self, device, buffer, dtype, shape, strides, byte_offset):
        self.device = device
        self._buffer = buffer
        self.tgl_dtype = dtype
        self.shape = shape
        self._strides = strides
        self.byte_offset = byte_offset

    # --- description ------------------------------------------------------------------------
    @property
    def dtype(self):
        return numpy_dtype(self.tgl_dtype)

    @property
    def itemsize(self):
        return _ITEMSIZE[self.tgl_dtype]

    @property
    def strides(self):
        return tuple(s * self.itemsize for s in self._strides)

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    @property
    def ndim(self):
        return len(self.shape)

    def dim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def numel(self):
        return self.size

    @property
    def nbytes(self):
        return self.size * self.itemsize

    def is_contiguous(self):
        return all(n == 1 or s == c for n, s, c in
                   zip(self.shape, self._strides, contiguous_strides(self.shape)))

    def desc(self):
        """The ABI descriptor (abi.tgl_tensor) of this view."""
        t = abi.tgl_tensor()
        t.buffer = self._buffer.handle
        t.byte_offset = self.byte_offset
        t.dtype = self.tgl_dtype
        t.rank = len(self.shape)
        for d, (n, s) in enumerate(zip(self.shape, self._strides)):
            t.shape[d] = n
            t.strides[d] = s
        return t

    def __repr__(self):
        return "tensorgl.Tensor(shape=%s, dtype=%s, device=%s:%d)" % (
            self.shape, self.dtype, self.device.plugin.name, self.device.index)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    __hash__ = object.__hash__  # == is elementwise, as numpy and torch

    # --- host copies ------------------------------------------------------------------------
    def _download(self, out, byte_offset):
        d = self.device
        d.check(d._state.api.buffer_download(d.handle, self._buffer.handle, byte_offset,
                                             out.ctypes.data_as(ctypes.c_void_p), out.nbytes),
                "buffer_download")

    def numpy(self):
        """A new numpy array with the tensor's values (waits for the ops that write it)."""
        if self.tgl_dtype == abi.TGL_DTYPE_BF16:
            return self.to(np.float32).numpy()
        dt = self.dtype
        if self.size == 0:  # nothing to copy; still a use after close is reported
            d, nbytes = self.device, ctypes.c_uint64()
            d.check(d._state.api.buffer_size(d.handle, self._buffer.handle, ctypes.byref(nbytes)), "buffer_size")
            return np.empty(self.shape, dt)
        if self.is_contiguous():
            out = np.empty(self.shape, dt)
            self._download(out, self.byte_offset)
            return out
        # A general view: the byte range it spans, then numpy's view of it.
        lo = sum(min(0, (n - 1) * s) for n, s in zip(self.shape, self._strides))
        hi = sum(max(0, (n - 1) * s) for n, s in zip(self.shape, self._strides))
        flat = np.empty(hi - lo + 1, dt)
        self._download(flat, self.byte_offset + lo * self.itemsize)
        view = np.lib.stride_tricks.as_strided(flat[-lo:], shape=self.shape, strides=self.strides)
        return np.array(view)

    def __array__(self, dtype=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        if self.size != 1:
            raise ValueError("item() of a tensor of %d elements" % self.size)
        return self.numpy().reshape(()).item()

    def __bool__(self):
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    # DLPack has no device type for GL: a tensor exports a HOST COPY (kDLCPU), so
    # np.from_dlpack(t) and torch.from_dlpack(t) work and get their own memory.
    def __dlpack__(self, stream=None):
        if stream is not None:
            raise BufferError("tensorgl exports DLPack host copies (kDLCPU); stream must be None")
        return self.numpy().__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)  # (kDLCPU, 0): the export is a host copy

    # --- views (no copy) --------------------------------------------------------------------
    def _view(self, shape, strides, byte_offset=None):
        return Tensor(self.device, self._buffer, self.tgl_dtype, tuple(shape), tuple(strides),
                      self.byte_offset if byte_offset is None else byte_offset)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if any(isinstance(k, (Tensor, np.ndarray, list)) for k in key):
            raise TypeError("indexing with a tensor or list is a gather, not a view: use "
                            "tensorgl.index_select(x, dim, index) or tensorgl.gather")
        n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
        if sum(1 for k in key if k is Ellipsis) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if n_real > self.ndim:
            raise IndexError("too many indices for a tensor of rank %d: %r" % (self.ndim, key))
        expanded = []
        for k in key:
            if k is Ellipsis:
                expanded.extend([slice(None)] * (self.ndim - n_real))
            else:
                expanded.append(k)
        expanded.extend([slice(None)] * (self.ndim - sum(1 for k in expanded if k is not None)))
        shape, strides, offset, d = [], [], self.byte_offset, 0
        for k in expanded:
            if k is None:
                shape.append(1)
                strides.append(0)
                continue
            n, s = self.shape[d], self._strides[d]
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                length = len(range(start, stop, step))
                if length:
                    offset += start * s * self.itemsize
                shape.append(length)
                strides.append(s * step)
            else:
                i = int(k)
                if not -n <= i < n:
                    raise IndexError("index %d is out of bounds for dim %d of size %d" % (i, d, n))
                offset += (i % n) * s * self.itemsize
            d += 1
        if len(shape) > MAX_RANK:
            raise IndexError("the view would have rank %d; tensorgl allows at most %d" % (len(shape), MAX_RANK))
        return self._view(shape, strides, offset)

    def __setitem__(self, key, value):
        """t[key] = value writes into the view (value: a tensor broadcasting to it, or a number)."""
        from . import ops
        view = self[key]
        if isinstance(value, Tensor):
            ops.expand(value, y=view)
        elif np.isscalar(value):
            ops.full(y=view, value=float(value))
        else:
            ops.expand(self.device.tensor(np.asarray(value, dtype=self.dtype)), y=view)

    def permute(self, *dims):
        dims = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else dims
        if sorted(d % max(self.ndim, 1) for d in dims) != list(range(self.ndim)):
            raise ValueError("permute: %r is not a permutation of the %d dims" % (dims, self.ndim))
        dims = [d % self.ndim for d in dims]
        return self._view([self.shape[d] for d in dims], [self._strides[d] for d in dims])

    def transpose(self, dim0, dim1):
        perm = list(range(self.ndim))
        perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
        return self.permute(perm)

    @property
    def T(self):
        return self.permute(list(reversed(range(self.ndim))))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def unsqueeze(self, dim):
        dim = dim % (self.ndim + 1)
        shape, strides = list(self.shape), list(self._strides)
        shape.insert(dim, 1)
        strides.insert(dim, 0)
        return self._view(shape, strides)

    def squeeze(self, dim=None):
        dims = [i for i, n in enumerate(self.shape) if n == 1] if dim is None else [dim % self.ndim]
        dims = [d for d in dims if self.shape[d] == 1]
        return self._view([n for i, n in enumerate(self.shape) if i not in dims],
                          [s for i, s in enumerate(self._strides) if i not in dims])

    def expand(self, *shape):
        """A broadcast view (stride 0 on stretched dims), numpy's broadcast_to; -1 keeps a dim."""
        shape = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        lead = len(shape) - self.ndim
        if lead < 0:
            raise ValueError("expand: %r has fewer dims than the tensor's shape %r" % (shape, self.shape))
        new_shape, new_strides = [], []
        for i, n in enumerate(shape):
            if i < lead:
                new_shape.append(n)
                new_strides.append(0)
                continue
            have, s = self.shape[i - lead], self._strides[i - lead]
            n = have if n == -1 else n
            if have == n:
                new_strides.append(s)
            elif have == 1:
                new_strides.append(0)
            else:
                raise ValueError("expand: dim %d of size %d cannot become %d" % (i - lead, have, n))
            new_shape.append(n)
        return self._view(new_shape, new_strides)

    def narrow(self, dim, start, length):
        key = [slice(None)] * self.ndim
        key[dim] = slice(start, start + length)
        return self[tuple(key)]

    def reshape(self, *shape):
        """A view when the tensor is contiguous, else a contiguous copy reshaped."""
        shape = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        shape = list(shape)
        if shape.count(-1) > 1:
            raise ValueError("reshape: only one dim may be -1, got %r" % (tuple(shape),))
        if -1 in shape:
            rest = int(np.prod([n for n in shape if n != -1], dtype=np.int64))
            shape[shape.index(-1)] = self.size // rest if rest else 0
        shape = _shape_tuple(shape)
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ValueError("reshape: cannot view %d elements of shape %r as %r"
                             % (self.size, self.shape, shape))
        base = self if self.is_contiguous() else self.contiguous()
        return base._view(shape, contiguous_strides(shape))

    view = reshape

    def flatten(self):
        return self.reshape(-1)

    # --- copies (ops) -----------------------------------------------------------------------
    def contiguous(self):
        from . import ops
        return self if self.is_contiguous() else ops.contiguous(self)

    def clone(self):
        from . import ops
        return ops.contiguous(self)

    def to(self, dtype):
        """A copy converted to dtype (the cast op: rounding to nearest even, saturating float to
        int, wrapping int to int; see plugin_api.h), or self when the dtype is the same."""
        from . import ops
        if tgl_dtype(dtype) == self.tgl_dtype:
            return self
        return ops.cast(self, dtype=dtype)

    def float(self):
        return self.to(np.float32)

    def half(self):
        return self.to(np.float16)

    # --- operators --------------------------------------------------------------------------
    def _binary(name, reflected=False):
        def method(self, other):
            from . import functional as F
            return getattr(F, name)(other, self) if reflected else getattr(F, name)(self, other)
        method.__name__ = name
        return method

    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("sub"), _binary("sub", True)
    __mul__, __rmul__ = _binary("mul"), _binary("mul", True)
    __truediv__, __rtruediv__ = _binary("div"), _binary("div", True)
    __pow__, __rpow__ = _binary("pow"), _binary("pow", True)
    __matmul__, __rmatmul__ = _binary("matmul"), _binary("matmul", True)
    __eq__, __ne__ = _binary("eq"), _binary("ne")
    __lt__, __le__ = _binary("lt"), _binary("le")
    __gt__, __ge__ = _binary("gt"), _binary("ge")
    __and__, __or__, __xor__ = _binary("logical_and"), _binary("logical_or"), _binary("logical_xor")
    del _binary

    def __neg__(self):
        from . import ops
        return ops.neg(self)

    def __abs__(self):
        from . import ops
        return ops.abs(self)

    def __invert__(self):
        from . import ops
        return ops.logical_not(self)


def from_dlpack(obj, device):
    """A new tensor on `device` holding a copy of a DLPack host tensor (numpy, torch CPU, a
    tensorgl.Tensor, ...). DLPack has no GL device type: only kDLCPU producers are accepted; a
    CUDA tensor raises (copy it to the host first)."""
    try:
        arr = np.from_dlpack(obj)
    except (RuntimeError, BufferError, TypeError) as e:
        raise BufferError("from_dlpack: tensorgl takes DLPack host (kDLCPU) memory only: %s" % e) from None
    return device.tensor(arr)
