"""The ONNX graph walker: ONNX nodes in, an mxnext Symbol and its parameters out.

Tensors whose values are known at import time (initializers, ``Constant`` outputs, and
whatever nodes compute from them alone, ``Shape`` of a statically shaped tensor included)
are kept as numpy arrays, so converters can read inputs that newer opsets moved out of
attributes (Reshape's shape, Slice's starts, Clip's bounds ...). Such a tensor becomes a
variable, with its value in ``arg_params``, only where an op consumes it as data.
"""

from __future__ import annotations

import numpy as np

from ... import ndarray as nd
from ... import symbol as sym
from ..._runtime.base import MXNetError
from ._ops import CONVERTERS
from ._proto import np_dtype, onnx_module

__all__ = ["GraphImporter", "graph_metadata"]

# ops whose outputs differ per call: never evaluated at import time
_NOT_FOLDED = frozenset({"RandomUniform", "RandomNormal", "RandomUniformLike",
                         "RandomNormalLike", "Multinomial", "Dropout"})


def _static_shape(value_info):
    """The shape a ``ValueInfoProto`` states, or None unless every dim is a number."""
    ttype = value_info.type.tensor_type
    if not ttype.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else None for d in ttype.shape.dim]
    return None if None in dims else tuple(dims)


# initializers at least this large stand in by their type for shape inference: no shape
# depends on their values (shapes, axes and bounds are small), and serialising them is
# most of what inference costs on a large model
_TYPE_ONLY_SIZE = 1024


def _inferred_graph(model):
    """The graph with ONNX's inferred ``value_info`` (the model's own graph where inference
    fails: shapes are a help, not a need), computed on a copy whose large initializers are
    replaced by typed graph inputs."""
    onnx = onnx_module()
    graph, helper = model.graph, onnx.helper
    small = [t for t in graph.initializer if np.prod(t.dims) < _TYPE_ONLY_SIZE]
    known = {i.name for i in graph.input}
    typed = [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
             for t in graph.initializer
             if np.prod(t.dims) >= _TYPE_ONLY_SIZE and t.name not in known]
    light = helper.make_model(
        helper.make_graph(graph.node, graph.name, [*graph.input, *typed], graph.output, small,
                          value_info=graph.value_info),
        opset_imports=model.opset_import, ir_version=model.ir_version,
        functions=model.functions)
    try:
        return onnx.shape_inference.infer_shapes(light).graph
    except Exception:  # noqa: BLE001
        return graph


def graph_metadata(graph) -> dict:
    """MXNet 1.9's metadata: ``input_tensor_data`` [(name, shape, elem_type)] for the inputs
    that are not initializers, ``output_tensor_data`` [(name, shape)]."""
    params = {t.name for t in graph.initializer}

    def dims(vi):
        return tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
    return {"input_tensor_data": [(i.name, dims(i), i.type.tensor_type.elem_type)
                                  for i in graph.input if i.name not in params],
            "output_tensor_data": [(o.name, dims(o)) for o in graph.output]}


class GraphImporter:
    """Converts one ONNX ``ModelProto``; ``convert()`` gives (sym, arg_params, aux_params)."""

    def __init__(self, model):
        onnx = onnx_module()
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                          1)
        self.graph = model.graph
        inferred = _inferred_graph(model)
        self.consts: dict[str, np.ndarray] = {}
        self.syms: dict[str, sym.Symbol] = {}
        self.shapes: dict[str, tuple] = {}
        self.ranks: dict[str, int] = {}     # also where a dimension is symbolic (a free batch)
        self.dtypes: dict[str, np.dtype] = {}
        self._names: set[str] = set()
        for vi in [*self.graph.input, *inferred.value_info, *inferred.output]:
            shape = _static_shape(vi)
            if shape is not None:
                self.shapes[vi.name] = shape
            if vi.type.tensor_type.HasField("shape"):
                self.ranks[vi.name] = len(vi.type.tensor_type.shape.dim)
            if vi.type.tensor_type.elem_type:
                self.dtypes[vi.name] = np_dtype(vi.type.tensor_type.elem_type)
        for init in self.graph.initializer:
            if not init.name.strip():
                raise MXNetError("mx.contrib.onnx.import_model: an initializer has no name")
            self.consts[init.name] = onnx.numpy_helper.to_array(init)

    # -- what converters use ------------------------------------------------------------
    def attrs(self, node) -> dict:
        """The node's attributes as Python values (tensors as numpy arrays, text as str)."""
        helper = self._onnx().helper
        out = {}
        for a in node.attribute:
            value = helper.get_attribute_value(a)
            if a.type == a.TENSOR:
                value = self._onnx().numpy_helper.to_array(value)
            elif isinstance(value, bytes):
                value = value.decode("utf-8")
            elif isinstance(value, list) and value and isinstance(value[0], bytes):
                value = [v.decode("utf-8") for v in value]
            out[a.name] = value
        return out

    def has(self, node, i) -> bool:
        """Whether the node's optional input ``i`` is given."""
        return i < len(node.input) and node.input[i] != ""

    def inp(self, node, i):
        """Input ``i`` as a Symbol (a known value becomes a variable with its value)."""
        return self.tensor(node.input[i], f"ONNX node {node.name or node.output[0]!r} "
                                          f"({node.op_type})")

    def tensor(self, name, where):
        """A graph tensor as a Symbol, by name (``where`` names the reader in errors)."""
        if name not in self.syms:
            if name not in self.consts:
                raise MXNetError(f"{where}: tensor {name!r} is produced by no node, "
                                 f"initializer or graph input")
            value = self.consts[name]
            if value.ndim == 0:      # mxnext arrays have at least one dimension
                value = self.consts[name] = value.reshape(1)
            self.syms[name] = sym.var(name, shape=value.shape, dtype=value.dtype)
        return self.syms[name]

    def constant(self, node, suffix, value):
        """A value a converter computed (an index grid ...) as a variable holding it."""
        name = self.name(node, suffix)
        self.consts[name] = value
        return self.tensor(name, f"ONNX node {node.name or node.output[0]!r}")

    def const(self, node, i, default=None):
        """Input ``i``'s value as a numpy array (``default`` when the input is not given);
        an MXNetError when it is computed at run time."""
        if not self.has(node, i):
            return default
        name = node.input[i]
        if name not in self.consts:
            raise MXNetError(f"ONNX node {node.name or node.output[0]!r} ({node.op_type}): "
                             f"input {i} ({name!r}) must be known at import time (an "
                             f"initializer or computed from initializers and static shapes), "
                             f"but it is computed at run time")
        return self.consts[name]

    def shape(self, node, i):
        """Input ``i``'s static shape, or None when it is not known at import time."""
        name = node.input[i]
        if name in self.consts:
            return self.consts[name].shape
        if name in self.shapes:
            return self.shapes[name]
        arg_shapes, out_shapes, _ = self.inp(node, i).infer_shape_partial(**{
            n: s for n, s in self.shapes.items() if n in self._var_names(self.syms[name])})
        if out_shapes and out_shapes[0] and all(out_shapes[0]):
            self.shapes[name] = tuple(out_shapes[0])
            return self.shapes[name]
        return None

    def rank(self, node, i):
        """Input ``i``'s number of dimensions; an MXNetError when it is not known."""
        shape = self.shape(node, i)
        if shape is None and node.input[i] in self.ranks:
            return self.ranks[node.input[i]]
        if shape is None:
            raise MXNetError(f"ONNX node {node.name or node.output[0]!r} ({node.op_type}): the "
                             f"rank of input {node.input[i]!r} must be known at import time "
                             f"(give the graph inputs static shapes)")
        return len(shape)

    def dtype(self, node, i):
        """Input ``i``'s numpy dtype (float32 where the model does not say)."""
        name = node.input[i]
        if name in self.consts:
            return self.consts[name].dtype
        return self.dtypes.get(name, np.dtype(np.float32))

    def name(self, node, suffix=""):
        """A Symbol name for (a part of) the node, unique in the graph."""
        base = (node.name.strip() or node.output[0]) + suffix
        name, k = base, 0
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        return name

    # -- the walk -------------------------------------------------------------------------
    def convert(self):
        params = set(self.consts)
        for vi in self.graph.input:
            if vi.name not in params:
                dtype = self.dtypes.get(vi.name)
                self.syms[vi.name] = sym.var(vi.name, shape=self.shapes.get(vi.name),
                                             dtype=None if dtype is None else dtype)
        self._names.update(self.syms)
        for node in self.graph.node:
            if node.domain not in ("", "ai.onnx"):
                raise MXNetError(f"mx.contrib.onnx.import_model: node {node.name!r} has op "
                                 f"{node.domain}.{node.op_type}; only the default ONNX domain "
                                 f"is converted")
            convert = CONVERTERS.get(node.op_type)
            if convert is None:
                raise MXNetError(f"mx.contrib.onnx.import_model: no conversion for ONNX op "
                                 f"{node.op_type!r} (node {node.name or node.output[0]!r}); "
                                 f"converted ops: {', '.join(sorted(CONVERTERS))}")
            if not self._fold(node, convert):
                self._store(node, convert(self, node))
        outputs = [self.tensor(o.name, "graph output") for o in self.graph.output]
        out = outputs[0] if len(outputs) == 1 else sym.Group(outputs)
        arg_params = {n: nd.array(self.consts[n], dtype=self.consts[n].dtype)
                      for n in out.list_arguments() if n in self.consts}
        aux_params = {n: nd.array(self.consts[n], dtype=self.consts[n].dtype)
                      for n in out.list_auxiliary_states() if n in self.consts}
        return out, arg_params, aux_params

    def _store(self, node, result):
        """Record a converter's result: Symbols, or numpy arrays for values it computed."""
        results = result if isinstance(result, (list, tuple)) else [result]
        for name, out in zip(node.output, results):
            if name:
                if isinstance(out, np.ndarray):
                    self.consts[name] = out
                else:
                    self.syms[name] = out

    def _fold(self, node, convert) -> bool:
        """Compute the node now when its inputs are known; True when it did."""
        if node.op_type in _NOT_FOLDED:
            return False
        if node.op_type == "Shape" and self.shape(node, 0) is not None:
            shape = np.array(self.shape(node, 0), dtype=np.int64)
            a = self.attrs(node)
            self.consts[node.output[0]] = shape[a.get("start", 0):a.get("end", len(shape))]
            return True
        given = [n for n in node.input if n]
        if not all(n in self.consts for n in given):
            return False
        result = convert(self, node)
        results = result if isinstance(result, (list, tuple)) else [result]
        if all(isinstance(r, np.ndarray) for r in results):
            self._store(node, result)
            return True
        group = sym.Group(list(results))
        try:
            values = group.eval(**{n: nd.array(self.consts[n], dtype=self.consts[n].dtype)
                                   for n in self._var_names(group)})
        except Exception:  # noqa: BLE001  (not computable now: keep the nodes in the graph)
            self._store(node, result)
            return True
        self._store(node, [self._as_declared(name, v.asnumpy())
                           for name, v in zip(node.output, values)])
        return True

    def _as_declared(self, name, value):
        """``value`` in the shape ONNX's shape inference gave ``name`` (a scalar computed as
        shape (1,) becomes 0-d again)."""
        shape = self.shapes.get(name)
        if shape is not None and value.shape != shape and value.size == int(np.prod(shape)):
            return value.reshape(shape)
        return value

    @staticmethod
    def _var_names(s):
        return set(s.list_arguments()) | set(s.list_auxiliary_states())

    @staticmethod
    def _onnx():
        return onnx_module()
