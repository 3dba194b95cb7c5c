"""``mx.onnx``: export MXNet models to ONNX with MXNet 1.9's interface.

``export_model(sym, params, in_shapes, ...)`` writes an ONNX file at an opset from 13 to the
installed onnx's latest; ``get_operator_support(opset_version)`` lists the ops that export.
It needs onnx (``pip install 'mxnext[onnx]'``, which brings onnxruntime too).
"""

from . import _ops_math, _ops_nn, _ops_rnn, _ops_shape  # noqa: F401  (fill the table)
from ._export import OPSET_MIN, export_model, get_operator_support

__all__ = ["export_model", "get_operator_support", "OPSET_MIN"]
