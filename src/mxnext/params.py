"""``mx.params``: the public face of ``mxnext._runtime.params``.

Operator parameters: pydantic models in the role of ``dmlc::Parameter``.
"""

from mxnext._runtime.params import (
    Param,
    Field,
    DType,
    normalize_dtype,
    format_value,
    mxnet_type,
)

__all__ = ["Param", "Field", "DType", "normalize_dtype", "format_value", "mxnet_type"]
