"""tensorgl.onnx: ONNX models on a tensorgl plugin through libtensorgl_runtime, shaped like
onnxruntime's InferenceSession (see docs/python.md and docs/runtime.md).

    sess = tensorgl.onnx.InferenceSession("model.onnx", plugin="gles")
    [y] = sess.run(None, {"x": x})

tensorgl.onnx.backend is an onnx.backend.base.Backend over the same sessions.
"""

import os

import numpy as np

from .._runtime import DTYPES, INVALID_ARGUMENT, OnnxRuntimeError, Runtime, default_runtime

__all__ = ["InferenceSession", "NodeArg", "OnnxRuntimeError"]


class NodeArg:
    """A graph input or output as onnxruntime describes it: name, shape (a list of ints: the runtime
    plans static shapes), type ("tensor(float)")."""

    def __init__(self, info):
        self.name = info.name.decode()
        self.shape = [int(info.shape[d]) for d in range(info.rank)]
        self.dtype = np.dtype(DTYPES[info.dtype][0]) if info.dtype in DTYPES else None
        self.type = DTYPES[info.dtype][1] if info.dtype in DTYPES else "tensor(%d)" % info.dtype

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)


def _argument_error(message, function="InferenceSession.run"):
    return OnnxRuntimeError(INVALID_ARGUMENT, "TGLRT_ERROR_INVALID_ARGUMENT", message, function)


class InferenceSession:
    """Loads and plans a model once on one device of a plugin; run() runs it.

    path_or_bytes: an .onnx path or the bytes of a ModelProto. plugin: "gles", "cpu" or a plugin
    file's path; device: the device index. fixed_inputs: {name: array} bound at load (inputs that
    are shape parameters; a path only). record_graph: record the plan as an ABI 1.2 graph and replay
    it. carry: {output name: input name}: after each run the output is copied on the device into the
    input (a decoder's KV cache); once a run has carried it, input_feed may leave that input out to
    keep the carried value (a path only). f64_as_f32: run a model with double tensors in f32, at
    f32's precision (a path only; docs/runtime.md). runtime_library: the path of
    libtensorgl_runtime.so (default: next to libtensorgl)."""

    def __init__(self, path_or_bytes, plugin="gles", device=0, fixed_inputs=None, record_graph=False,
                 runtime_library=None, carry=None, f64_as_f32=False, _load_fixing_from=None):
        self._rt = Runtime(runtime_library) if runtime_library else default_runtime()
        self._model = None
        self._dev = self._rt.open(plugin, device)
        try:
            if _load_fixing_from is not None:
                self._model, self.fixed_inputs = self._rt.load_fixing(self._dev, path_or_bytes, _load_fixing_from, record_graph,
                                                                      f64_as_f32)
            else:
                source = path_or_bytes if isinstance(path_or_bytes, (bytes, bytearray, memoryview)) else os.fspath(path_or_bytes)
                self._model = self._rt.load(self._dev, source, fixed_inputs, record_graph, carry, f64_as_f32)
                self.fixed_inputs = list(fixed_inputs or {})
            self._inputs = [NodeArg(i) for i in self._rt.infos(self._model, True)]
            self._outputs = [NodeArg(i) for i in self._rt.infos(self._model, False)]
            self._carried_into = set((carry or {}).values())
            self._carried = False  # a run has carried values into those inputs
        except BaseException:
            self.close()
            raise

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def run(self, output_names, input_feed):
        """output_names: names of the outputs to return (None: all, in model order; the others are
        not downloaded); input_feed: {input name: array} with every input, of its declared dtype and
        shape (a carried input may be left out once a run has carried it). Returns a list of numpy
        arrays."""
        if self._model is None:
            raise _argument_error("the session is closed")
        known = {a.name for a in self._inputs}
        unknown = sorted(set(input_feed) - known)
        kept = self._carried_into if self._carried else set()
        missing = [a.name for a in self._inputs if a.name not in input_feed and a.name not in kept]
        if unknown or missing:
            raise _argument_error("input_feed: %s%s; the model's inputs are %s" % (
                "unknown %s" % unknown if unknown else "", (" " if unknown else "") + ("missing %s" % missing if missing else ""),
                [a.name for a in self._inputs]))
        ins = []
        for arg in self._inputs:
            if arg.name not in input_feed:
                ins.append(None)  # the carried value stays on the device
                continue
            a = np.asarray(input_feed[arg.name])
            if a.dtype != arg.dtype or list(a.shape) != arg.shape:
                raise _argument_error("input '%s': expected %s %s (%s), got %s %s" % (
                    arg.name, arg.dtype, arg.shape, arg.type, a.dtype, list(a.shape)))
            ins.append(np.ascontiguousarray(a))
        names = [o.name for o in self._outputs]
        for n in output_names or []:
            if n not in names:
                raise _argument_error("output_names: no output '%s'; the model's outputs are %s" % (n, names))
        wanted = set(names if output_names is None else output_names)
        outs = [np.empty(o.shape, dtype=o.dtype) if o.name in wanted else None for o in self._outputs]
        self._rt.run(self._model, ins, outs)
        self._carried = bool(self._carried_into)
        if output_names is None:
            return outs
        by_name = dict(zip(names, outs))
        return [by_name[n] for n in output_names]

    def close(self):
        """Frees the model and closes the device (also at garbage collection)."""
        if self._model is not None:
            self._rt.lib.tglrt_model_free(self._model)
            self._model = None
        if getattr(self, "_dev", None) is not None:
            self._rt.lib.tglrt_device_close(self._dev)
            self._dev = None

    def __del__(self):
        if getattr(self, "_rt", None) is not None:
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
