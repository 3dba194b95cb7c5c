"""MXNet 1.9's ONNX importer, ``mx.contrib.onnx``: ``import_model`` (Symbol and parameters),
``import_to_gluon`` (a SymbolBlock) and ``get_model_metadata``, for current ONNX opsets.
Needs the ``onnx`` package (``pip install 'mxnext[onnx]'``), imported on first use."""

from ._import import get_model_metadata, import_model, import_to_gluon

__all__ = ["get_model_metadata", "import_model", "import_to_gluon"]
