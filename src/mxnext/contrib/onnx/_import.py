"""The public import functions: a model file (or a loaded ``ModelProto``) in."""

from __future__ import annotations

import importlib

from ._graph import GraphImporter, graph_metadata
from ._proto import onnx_module

__all__ = ["get_model_metadata", "import_model", "import_to_gluon"]


def _load(model):
    onnx = onnx_module()
    return model if isinstance(model, onnx.ModelProto) else onnx.load_model(model)


def import_model(model_file):
    """``(sym, arg_params, aux_params)`` of an ONNX model: an mxnext Symbol whose free
    variables are the graph's inputs, and the initializers it reads as NDArray dicts
    (moving means and variances of BatchNormalization in ``aux_params``)."""
    return GraphImporter(_load(model_file)).convert()


def get_model_metadata(model_file) -> dict:
    """``{'input_tensor_data': [(name, shape, elem_type)], 'output_tensor_data':
    [(name, shape)]}`` of an ONNX model (inputs that are initializers left out)."""
    return graph_metadata(_load(model_file).graph)


def import_to_gluon(model_file, ctx=None):
    """The ONNX model as a ``gluon.SymbolBlock`` with its parameters loaded on ``ctx`` (a
    Context or a list of them; the current one when None)."""
    from ... import symbol
    # mx.gluon is loaded on first use, by name, as mxnext's __init__ loads it: gluon imports
    # contrib (gluon.contrib.data.text), so contrib does not import gluon's modules
    SymbolBlock = importlib.import_module("mxnext.gluon").SymbolBlock
    model = _load(model_file)
    sym, arg_params, aux_params = GraphImporter(model).convert()
    names = [name for name, _, _ in graph_metadata(model.graph)["input_tensor_data"]]
    net = SymbolBlock(outputs=sym, inputs=[symbol.var(n) for n in names])
    params = net.collect_params()
    for name, value in {**arg_params, **aux_params}.items():
        if name in params:
            params[name].shape = value.shape
            params[name]._load_init(value, ctx=ctx)
    return net
