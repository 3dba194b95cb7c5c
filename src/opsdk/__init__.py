"""opsdk: the stable face of mxnext for plugin authors.

Compatibility promise (semver): every name in ``__all__`` keeps its meaning
and signature within a major version of mxnext; additions come in minor
versions; removals only in a new major version after a deprecation warning.
Anything not listed here (``mxnext`` internals included) may change anytime.

Three ways to write an op, all compiling to the same registry ``OpDef``:
``register_op`` (NNVM-style builder), ``simple_op`` (unary/binary SimpleOp)
and ``OperatorProperty``/``Operator`` with ``register_property`` (legacy).
Use ``register_op`` to *define* an op and ``extend_op`` to *attach*
attributes (such as ``FCompute<gpu>``) to an op another plugin defines; a faster kernel
that covers only some calls hands the others to ``outranked`` (the kernel it outranks).
A plugin's ``mxnext_register_ops`` hook imports its op modules, or hands their
names to ``register_op_modules``, which imports each at the first use of one
of its ops. Each registration hook receives a registrar (``OpRegistrar``, ``DeviceRegistrar``,
``KVStoreRegistrar``) with one method, ``register``. Devices use ``opsdk.device`` (and
``opsdk.testing.run_device_checks``); KVStore backends ``opsdk.kvstore`` (and
``opsdk.testing.kvstore``).
"""

from mxnext.base import MXNetError, ParamError, PluginError, ShapeError, TypeInferError
from mxnext.graph import NodeEntry, make_node
from mxnext.hookspecs import hookimpl
from mxnext.opctx import OpContext, OpReqType, assign
from mxnext.params import DType, Field, Param
from mxnext.resource import ResourceRequest
from mxnext.runtime import ThreadPolicy, apply_thread_policy, cpu_share, thread_policy
from mxnext._runtime.registrars import DeviceRegistrar, KVStoreRegistrar, OpRegistrar

from ._builder import OpBuilder, extend_op, outranked, register_op
from ._manifest import register_op_modules
from .dtypes import AMP_FLOAT_DTYPES, FLOAT_DTYPES, FloatOnly
from .grad import (CloneGradient, ElemwiseGradUseIn, ElemwiseGradUseInOut, ElemwiseGradUseNone,
                   ElemwiseGradUseOut, MakeZeroGradNodes)
from .legacy import Operator, OperatorProperty, register_property
from .shape import ElemwiseShape, ElemwiseType
from .simple_op import (INPLACE_IN_OUT, INPLACE_LHS_OUT, INPLACE_OUT_IN, INPLACE_OUT_LHS, NO_INPLACE,
                        EnvArguments, SimpleOp, simple_op)

__all__ = [
    # plugin hooks and the registrars they receive
    "hookimpl", "OpRegistrar", "DeviceRegistrar", "KVStoreRegistrar",
    # authoring styles
    "register_op", "extend_op", "outranked", "register_op_modules", "OpBuilder", "simple_op", "SimpleOp",
    "EnvArguments", "NO_INPLACE", "INPLACE_IN_OUT", "INPLACE_OUT_IN", "INPLACE_LHS_OUT",
    "INPLACE_OUT_LHS",
    "OperatorProperty", "Operator", "register_property",
    # parameters and runtime
    "Param", "Field", "DType", "OpReqType", "OpContext", "ResourceRequest", "assign",
    # how many threads a kernel may use (kernel threads, BLAS, OpenMP)
    "thread_policy", "apply_thread_policy", "ThreadPolicy", "cpu_share",
    # shape, type and gradient rules
    "ElemwiseShape", "ElemwiseType", "FloatOnly", "FLOAT_DTYPES", "AMP_FLOAT_DTYPES", "ElemwiseGradUseIn",
    "ElemwiseGradUseOut",
    "ElemwiseGradUseInOut", "ElemwiseGradUseNone", "CloneGradient", "MakeZeroGradNodes",
    "make_node", "NodeEntry",
    # errors
    "MXNetError", "ParamError", "PluginError", "ShapeError", "TypeInferError",
]
