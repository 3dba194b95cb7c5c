"""``mx.base``: the public face of ``mxnext._runtime.base``.

Exception family and the small helpers MXNet's Python code imports from ``mxnet.base``.
"""

from mxnext._runtime.base import (
    MXNetError,
    EngineError,
    ParamError,
    OpNotFound,
    PluginError,
    PluginWarning,
    ShapeError,
    TypeInferError,
    NotImplementedForSymbol,
    NotSupportedForSparseNDArray,
    describe_error,
    did_you_mean,
    py_str,
    string_types,
    numeric_types,
    integer_types,
    mx_real_t,
    data_dir,
    data_dir_default,
    classproperty,
    with_metaclass,
    is_np_shape,
    set_np_shape,
    FLAG_TO_DTYPE,
    DTYPE_TO_FLAG,
)

# MXNet-era private helpers that libraries written for MXNet import from mxnet.base
from mxnext._runtime.base import (  # noqa: F401
    _as_list,
    _MXClassPropertyDescriptor,
    _MXClassPropertyMetaClass,
)

__all__ = ["MXNetError", "EngineError", "ParamError", "OpNotFound", "PluginError",
           "PluginWarning", "ShapeError", "TypeInferError", "NotImplementedForSymbol",
           "NotSupportedForSparseNDArray", "describe_error", "did_you_mean", "py_str",
           "string_types", "numeric_types", "integer_types", "mx_real_t", "data_dir",
           "data_dir_default", "classproperty", "with_metaclass", "is_np_shape",
           "set_np_shape", "FLAG_TO_DTYPE", "DTYPE_TO_FLAG"]
