"""onnx.backend.base.Backend over tensorgl.onnx.InferenceSession.

Devices: "CPU" runs on the cpu plugin, "GLES" on the gles plugin (ONNX's own device names are
CPU and CUDA; CUDA is not supported). plugin= (a name or a path) overrides the device's plugin.
Models are written to a temporary file so that inputs the runtime needs at load (shape
parameters such as Reshape's shape) can be bound to their values in run_model and run_node.
"""

import os
import tempfile

import numpy as np
import onnx
from onnx import helper, mapping, numpy_helper, shape_inference
from onnx.backend.base import Backend, BackendRep

from . import InferenceSession

_PLUGIN_OF_DEVICE = {"CPU": "cpu", "GLES": "gles"}


def _plugin(device, plugin):
    if plugin is not None:
        return plugin
    key = str(device).split(":")[0].upper()
    if key not in _PLUGIN_OF_DEVICE:
        raise ValueError("device: expected one of %s, got %r" % (sorted(_PLUGIN_OF_DEVICE), device))
    return _PLUGIN_OF_DEVICE[key]


class TensorGLRep(BackendRep):
    """A prepared model: run(inputs) takes a list (graph input order) or a dict of arrays."""

    def __init__(self, model, plugin, inputs_known=None, **kwargs):
        with tempfile.TemporaryDirectory(prefix="tgl-onnx-") as d:
            path = os.path.join(d, "model.onnx")
            onnx.save(model, path)
            self.session = InferenceSession(path, plugin=plugin, _load_fixing_from=inputs_known, **kwargs)
        self._graph_inputs = [vi.name for vi in model.graph.input
                              if vi.name not in {t.name for t in model.graph.initializer}]

    def run(self, inputs, **kwargs):
        feed = dict(inputs) if isinstance(inputs, dict) else dict(zip(self._graph_inputs, inputs))
        feed = {k: v for k, v in feed.items() if k not in self.session.fixed_inputs}
        return self.session.run(None, {k: np.asarray(v) for k, v in feed.items()})


class TensorGLBackend(Backend):
    @classmethod
    def prepare(cls, model, device="CPU", plugin=None, **kwargs):
        if isinstance(model, (bytes, str)):
            model = onnx.load_model_from_string(model) if isinstance(model, bytes) else onnx.load(model)
        return TensorGLRep(model, _plugin(device, plugin), **kwargs)

    @classmethod
    def run_model(cls, model, inputs, device="CPU", plugin=None, **kwargs):
        names = [vi.name for vi in model.graph.input if vi.name not in {t.name for t in model.graph.initializer}]
        known = dict(inputs) if isinstance(inputs, dict) else dict(zip(names, inputs))
        rep = TensorGLRep(model, _plugin(device, plugin), inputs_known={k: np.asarray(v) for k, v in known.items()}, **kwargs)
        return rep.run(known)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, plugin=None, opset_version=None, **kwargs):
        """Runs one NodeProto on arrays (a list in the node's input order, or a dict); the outputs'
        types and shapes come from ONNX's shape inference."""
        if isinstance(inputs, dict):
            arrays = [np.asarray(inputs[n]) for n in node.input if n]
        else:
            arrays = [np.asarray(a) for a in inputs]
        names = [n for n in node.input if n]
        if len(arrays) != len(names):
            raise ValueError("inputs: node %s (%s) has %d inputs, got %d arrays" % (node.name, node.op_type, len(names), len(arrays)))
        graph_inputs = [helper.make_tensor_value_info(n, mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
                        for n, a in zip(names, arrays)]
        opset = [helper.make_opsetid(node.domain or "", opset_version or onnx.defs.onnx_opset_version())]
        # The inputs are given to inference as constants too, so that outputs whose shapes depend on
        # input values (Reshape's shape, Expand's, ...) get static shapes as the runtime needs.
        untyped = helper.make_model(helper.make_graph([node], "run_node", graph_inputs,
                                                      [onnx.ValueInfoProto(name=o) for o in node.output],
                                                      [numpy_helper.from_array(a, n) for n, a in zip(names, arrays)]),
                                    opset_imports=opset)
        inferred = {vi.name: vi for vi in shape_inference.infer_shapes(untyped, strict_mode=True, data_prop=True).graph.value_info}
        outputs = []
        for o in node.output:
            if o not in inferred:
                raise ValueError("node %s (%s): ONNX's shape inference gives no type for output '%s'" % (node.name, node.op_type, o))
            outputs.append(inferred[o])
        model = helper.make_model(helper.make_graph([node], "run_node", graph_inputs, outputs), opset_imports=opset)
        return cls.run_model(model, dict(zip(names, arrays)), device=device, plugin=plugin, **kwargs)

    @classmethod
    def supports_device(cls, device):
        return str(device).split(":")[0].upper() in _PLUGIN_OF_DEVICE


prepare = TensorGLBackend.prepare
run_model = TensorGLBackend.run_model
run_node = TensorGLBackend.run_node
supports_device = TensorGLBackend.supports_device
