"""``export_model`` and ``get_operator_support``: MXNet 1.9's ``mx.onnx`` interface."""

from __future__ import annotations

import logging

import numpy as np

from .._runtime.base import ParamError
from ._table import CONVERTERS

__all__ = ["export_model", "get_operator_support", "OPSET_MIN"]

OPSET_MIN = 13
"""The lowest ONNX opset the converters write."""

_INSTALL = "pip install 'mxnext[onnx]' (it installs onnx and onnxruntime)"


def _onnx():
    try:
        import onnx
    except ImportError as err:
        raise ImportError(f"mx.onnx needs the onnx package, which is not installed: "
                          f"{_INSTALL}") from err
    return onnx


def _opset(onnx, opset_version) -> int:
    latest = onnx.defs.onnx_opset_version()
    if opset_version is None:
        return latest
    if not isinstance(opset_version, int) or not OPSET_MIN <= opset_version <= latest:
        raise ParamError(f"mx.onnx: opset_version must be an int from {OPSET_MIN} to {latest} "
                         f"(the installed onnx {onnx.__version__}'s latest), not "
                         f"{opset_version!r}")
    return opset_version


def get_operator_support(opset_version=None) -> list:
    """The sorted MXNet op names that export at ``opset_version`` (default: the installed
    onnx's latest opset)."""
    opset = _opset(_onnx(), opset_version)
    return sorted(name for name, (low, _) in CONVERTERS.items() if low <= opset)


def _load(sym, params):
    from .. import ndarray as nd, symbol
    if isinstance(sym, str):
        sym = symbol.load(sym)
    if not isinstance(sym, symbol.Symbol):
        raise ParamError(f"mx.onnx.export_model: sym must be a Symbol or a -symbol.json path, "
                         f"not {type(sym).__name__}")
    if isinstance(params, str):
        params = nd.load(params) or {}      # a model without parameters loads as []
    elif isinstance(params, (list, tuple)) and len(params) == 2:
        params = {**params[0], **params[1]}
    if not isinstance(params, dict):
        raise ParamError(f"mx.onnx.export_model: params must be a dict, an (arg_params, "
                         f"aux_params) pair or a .params path, not {type(params).__name__}")
    arrays = {}
    for key, value in params.items():
        name = key.split(":", 1)[1] if key.startswith(("arg:", "aux:")) else key
        arrays[name] = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
    return sym, arrays


def export_model(sym, params, in_shapes=None, in_types=np.float32,
                 onnx_file_path="model.onnx", verbose=False, dynamic=False,
                 dynamic_input_shapes=None, run_shape_inference=False, input_type=None,
                 input_shape=None, opset_version=None):
    """Export an MXNet model to ONNX and return ``onnx_file_path``.

    ``sym``: a Symbol or a ``-symbol.json`` path; ``params``: a dict (``arg:``/``aux:``
    prefixes allowed), an (arg_params, aux_params) pair or a ``.params`` path;
    ``in_shapes``/``in_types``: the data inputs' shapes and dtypes (one dtype serves all),
    in ``list_inputs()`` order; ``dynamic``: every input dimension free (or as
    ``dynamic_input_shapes`` says, None for a free one); ``opset_version``: 13 to the
    installed onnx's latest (default), written to the model's ``opset_import``.
    ``input_type``/``input_shape`` are the old names of ``in_types``/``in_shapes``.
    """
    onnx = _onnx()
    from . import _graph
    opset = _opset(onnx, opset_version)
    in_types = in_types if input_type is None else input_type
    in_shapes = in_shapes if input_shape is None else input_shape
    if in_shapes is None:
        raise ParamError("mx.onnx.export_model: in_shapes is required (the data inputs' "
                         "shapes, e.g. [(1, 3, 224, 224)])")
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    if len(in_types) != len(in_shapes):
        raise ParamError(f"mx.onnx.export_model: in_types has {len(in_types)} entries but "
                         f"in_shapes has {len(in_shapes)}")
    if dynamic_input_shapes is not None and not dynamic:
        raise ParamError("mx.onnx.export_model: dynamic_input_shapes is given; set "
                         "dynamic=True to use it")
    dynamic_shapes = None
    if dynamic:
        dynamic_shapes = dynamic_input_shapes or [[None] * len(s) for s in in_shapes]
        if [len(s) for s in dynamic_shapes] != [len(s) for s in in_shapes]:
            raise ParamError("mx.onnx.export_model: dynamic_input_shapes must give one shape "
                             "per input with as many dimensions as in_shapes")
    sym, arrays = _load(sym, params)
    graph = _graph.convert_graph(onnx, sym, arrays, in_shapes, [np.dtype(t) for t in in_types],
                                 opset, dynamic_shapes)
    model = onnx.helper.make_model(graph, producer_name="mxnext",
                                   opset_imports=[onnx.helper.make_opsetid("", opset)])
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception as err:    # MXNet keeps the export when ONNX's inference fails
            logging.info("mx.onnx: shape inference failed (%s); the export is kept", err)
    onnx.save(model, onnx_file_path)
    if verbose:
        logging.info("mx.onnx: exported %d ONNX nodes at opset %d to %s", len(graph.node),
                     opset, onnx_file_path)
    return onnx_file_path
