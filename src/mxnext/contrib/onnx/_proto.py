"""The ``onnx`` package, imported on first use, and its element types as numpy dtypes."""

from __future__ import annotations

import numpy as np

__all__ = ["np_dtype", "onnx_module"]


def onnx_module():
    """The ``onnx`` package, or an ImportError saying how to install it."""
    try:
        import onnx
    except ImportError as err:
        raise ImportError("mx.contrib.onnx needs the onnx package: pip install "
                          "'mxnext[onnx]' (or pip install onnx)") from err
    return onnx


def np_dtype(elem_type: int):
    """The numpy dtype of an ONNX ``TensorProto`` element type."""
    return np.dtype(onnx_module().helper.tensor_dtype_to_np_dtype(elem_type))
