"""libtensorgl_runtime (the ONNX runtime's C API, runtime/include/tensorgl/runtime.h) through
ctypes: the one binding that tensorgl.onnx and runtime/tools/node_tests.py use.

Where libtensorgl_runtime.so is looked for (the first that loads wins):
  1. the path given to Runtime(path);
  2. next to libtensorgl: the directory of $TENSORGL_LIB, else the lib directory of the install this
     package belongs to (tensorgl/_install.py);
  3. the dynamic linker's search for libtensorgl_runtime.so.
"""

import ctypes
import os
import re

import numpy as np

from ._library import TensorGLError, _candidates, _decode, made_on_first_use

MAX_RANK = 8
FILE_NAME = "libtensorgl_runtime.so"

# tglrt_status
OK, INVALID_ARGUMENT, IO, INVALID_MODEL, UNSUPPORTED, OUT_OF_RANGE, PLUGIN, INTERNAL = range(8)

# tglrt_dtype (ONNX's TensorProto.DataType) -> (numpy dtype, onnxruntime's type string).
# bfloat16 travels as its bits in uint16 (numpy has no bfloat16).
DTYPES = {1: (np.float32, "tensor(float)"), 2: (np.uint8, "tensor(uint8)"), 3: (np.int8, "tensor(int8)"),
          4: (np.uint16, "tensor(uint16)"), 5: (np.int16, "tensor(int16)"),
          6: (np.int32, "tensor(int32)"), 7: (np.int64, "tensor(int64)"), 9: (np.bool_, "tensor(bool)"),
          10: (np.float16, "tensor(float16)"), 11: (np.float64, "tensor(double)"), 12: (np.uint32, "tensor(uint32)"),
          13: (np.uint64, "tensor(uint64)"), 16: (np.uint16, "tensor(bfloat16)")}


class OnnxRuntimeError(TensorGLError):
    """A call of libtensorgl_runtime failed: status (tglrt_status), status_name
    ("TGLRT_ERROR_UNSUPPORTED"), message (the runtime's words), function."""

    def __init__(self, status, status_name, message, function):
        self.status, self.status_name, self.message, self.function, self.op = int(status), status_name, message, function, None
        RuntimeError.__init__(self, "%s failed: %s: %s" % (function, status_name, message))


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_uint32),
                ("shape", ctypes.c_int64 * MAX_RANK), ("bytes", ctypes.c_uint64)]


class FixedInput(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_void_p), ("bytes", ctypes.c_uint64)]


class Carry(ctypes.Structure):
    _fields_ = [("output", ctypes.c_char_p), ("input", ctypes.c_char_p)]


class LoadOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("n_fixed_inputs", ctypes.c_uint32),
                ("fixed_inputs", ctypes.POINTER(FixedInput)), ("record_graph", ctypes.c_uint32),
                ("reserved", ctypes.c_uint32), ("n_carries", ctypes.c_uint32), ("reserved2", ctypes.c_uint32),
                ("carries", ctypes.POINTER(Carry)), ("f64_as_f32", ctypes.c_uint32), ("reserved3", ctypes.c_uint32)]


class ProfileEntry(ctypes.Structure):
    _fields_ = [("node_name", ctypes.c_char_p), ("op_type", ctypes.c_char_p), ("device_ops", ctypes.c_uint32),
                ("runs", ctypes.c_uint32), ("total_ns", ctypes.c_uint64), ("device_timer", ctypes.c_uint32)]


def _runtime_candidates(path):
    if path:
        return [("the path given", os.fspath(path))]
    found = [("next to libtensorgl (%s: %s)" % (what, lib), os.path.join(os.path.dirname(lib), FILE_NAME))
             for what, lib in _candidates(None) if os.path.dirname(lib)]
    return found + [("the dynamic linker's search", FILE_NAME)]


class Runtime:
    """libtensorgl_runtime loaded with ctypes; every C API function with its signature."""

    def __init__(self, path=None):
        tried = []
        for what, candidate in _runtime_candidates(path):
            try:
                lib = ctypes.CDLL(candidate)
                self.path = candidate
                break
            except OSError as e:
                tried.append("%s: %s (%s)" % (what, candidate, e))
        else:
            raise OSError("libtensorgl_runtime not found; tried %s. It is looked for next to libtensorgl: "
                          "set TENSORGL_LIB to <build>/lib/libtensorgl.so or <prefix>/lib/libtensorgl.so"
                          % "; ".join(tried))
        vp, u32, u64p = ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint64)
        for name, restype, argtypes in (
                ("tglrt_last_error", ctypes.c_char_p, []),
                ("tglrt_status_name", ctypes.c_char_p, [ctypes.c_int32]),
                ("tglrt_device_open", ctypes.c_int32, [ctypes.c_char_p, u32, ctypes.POINTER(vp)]),
                ("tglrt_device_close", ctypes.c_int32, [vp]),
                ("tglrt_device_plugin_name", ctypes.c_char_p, [vp]),
                ("tglrt_model_load", ctypes.c_int32, [vp, ctypes.c_char_p, ctypes.POINTER(vp)]),
                ("tglrt_model_load_ex", ctypes.c_int32, [vp, ctypes.c_char_p, ctypes.POINTER(LoadOptions), ctypes.POINTER(vp)]),
                ("tglrt_model_load_bytes", ctypes.c_int32, [vp, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(vp)]),
                ("tglrt_model_free", None, [vp]),
                ("tglrt_model_input_count", u32, [vp]),
                ("tglrt_model_output_count", u32, [vp]),
                ("tglrt_model_input_info", ctypes.c_int32, [vp, u32, ctypes.POINTER(TensorInfo)]),
                ("tglrt_model_output_info", ctypes.c_int32, [vp, u32, ctypes.POINTER(TensorInfo)]),
                ("tglrt_model_run", ctypes.c_int32, [vp, ctypes.POINTER(vp), u64p, u32, ctypes.POINTER(vp), u64p, u32]),
                ("tglrt_model_memory", ctypes.c_int32, [vp, u64p, u64p, u64p]),
                ("tglrt_model_set_profiling", ctypes.c_int32, [vp, ctypes.c_int]),
                ("tglrt_model_profile_count", u32, [vp]),
                ("tglrt_model_profile_entry", ctypes.c_int32, [vp, u32, ctypes.POINTER(ProfileEntry)])):
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        self.lib = lib

    def error(self, status, function):
        return OnnxRuntimeError(status, _decode(self.lib.tglrt_status_name(status)),
                             _decode(self.lib.tglrt_last_error()) or "", function)

    def check(self, status, function):
        if status != OK:
            raise self.error(status, function)

    def open(self, plugin, index=0):
        dev = ctypes.c_void_p()
        self.check(self.lib.tglrt_device_open(os.fsencode(plugin), index, ctypes.byref(dev)),
                   "tglrt_device_open(%r, %d)" % (plugin, index))
        return dev

    def load(self, dev, source, fixed=None, record_graph=False, carry=None, f64_as_f32=False):
        """Loads a model from a path or the bytes of a ModelProto; fixed: {input name: array} bound at
        load (tglrt_load_options.fixed_inputs; a path only); carry: {output name: input name}
        carried on the device from run to run (tglrt_load_options.carries); f64_as_f32: run double
        tensors in f32 (tglrt_load_options.f64_as_f32). Returns the handle."""
        model = ctypes.c_void_p()
        if isinstance(source, (bytes, bytearray, memoryview)):
            if fixed or record_graph or carry or f64_as_f32:
                raise ValueError("fixed inputs, record_graph, carry and f64_as_f32 need the model as a file path (the C API "
                                 "takes load options with a path only)")
            data = bytes(source)
            self.check(self.lib.tglrt_model_load_bytes(dev, data, len(data), ctypes.byref(model)), "tglrt_model_load_bytes")
            return model
        fixed = fixed or {}
        keep = [np.ascontiguousarray(a) for a in fixed.values()]
        items = (FixedInput * max(len(keep), 1))(*[FixedInput(n.encode(), a.ctypes.data, a.nbytes) for n, a in zip(fixed, keep)])
        carry = carry or {}
        carries = (Carry * max(len(carry), 1))(*[Carry(o.encode(), i.encode()) for o, i in carry.items()])
        opts = LoadOptions(ctypes.sizeof(LoadOptions), len(keep), items, int(record_graph), 0, len(carry), 0, carries,
                           int(f64_as_f32), 0)
        self.check(self.lib.tglrt_model_load_ex(dev, os.fsencode(source), ctypes.byref(opts), ctypes.byref(model)),
                   "tglrt_model_load_ex(%r)" % os.fspath(source))
        return model

    _NEEDS_FIXED = re.compile(r"input \d+ \('([^']*)'\) must be known when the model is loaded")

    def load_fixing(self, dev, path, arrays, record_graph=False, f64_as_f32=False):
        """load() where the inputs' values are known (node tests, Backend.run_model): an input the
        runtime needs at load (a shape parameter such as Reshape's shape or TopK's k) is bound to its
        value and the load retried. Returns (model, [names of the inputs bound])."""
        fixed = {}
        while True:
            try:
                return self.load(dev, path, fixed, record_graph, f64_as_f32=f64_as_f32), list(fixed)
            except OnnxRuntimeError as e:
                m = self._NEEDS_FIXED.search(e.message)
                if e.status != UNSUPPORTED or not m or m.group(1) not in arrays or m.group(1) in fixed:
                    raise
                fixed[m.group(1)] = arrays[m.group(1)]

    def infos(self, model, inputs):
        count, info = ((self.lib.tglrt_model_input_count, self.lib.tglrt_model_input_info) if inputs
                       else (self.lib.tglrt_model_output_count, self.lib.tglrt_model_output_info))
        out = []
        for i in range(count(model)):
            ti = TensorInfo()
            self.check(info(model, i, ctypes.byref(ti)), info.__name__)
            out.append(ti)
        return out

    def run(self, model, in_arrays, out_arrays):
        """tglrt_model_run on C-contiguous arrays of the right dtypes and sizes (model order); None:
        a carried input kept on the device, or an output not downloaded."""
        def ptrs(arrays):
            n = max(len(arrays), 1)
            return ((ctypes.c_void_p * n)(*[None if a is None else a.ctypes.data for a in arrays]),
                    (ctypes.c_uint64 * n)(*[0 if a is None else a.nbytes for a in arrays]))
        ip, ib = ptrs(in_arrays)
        op, ob = ptrs(out_arrays)
        self.check(self.lib.tglrt_model_run(model, ip, ib, len(in_arrays), op, ob, len(out_arrays)), "tglrt_model_run")


# The process's Runtime, made on first use.
default_runtime = made_on_first_use(Runtime)
