"""MXNet's ``mx.operator``: custom operators written in Python (``CustomOp`` computes,
``CustomOpProp`` describes, ``register`` names them), used as the registered op ``Custom``:
``mx.nd.Custom(*inputs, op_type=name, **kwargs)``, ``mx.sym.Custom(..., op_type=name)``.

``Custom`` is a stateful async op (``mxnext._custom``): ``create_operator`` makes one
``CustomOp`` per application (per node of a bound graph), and its ``forward``/``backward``
run on a custom-op thread through the engine, like any op; ``mx.nd`` calls inside them
are ordinary engine work.

``PythonOp``, ``NumpyOp`` and ``NDArrayOp`` are MXNet's older (deprecated) Python operator
interfaces; ``get_symbol`` runs them as a ``Custom`` op under a private op_type.
"""

from __future__ import annotations

from collections import namedtuple

from . import _custom
from ._runtime import registry
from ._runtime.base import MXNetError
from ._runtime.params import mxnet_type
from .util import is_np_array

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators",
           "get_operator_arguments", "OperatorArguments", "PythonOp", "NumpyOp", "NDArrayOp"]

OperatorArguments = namedtuple("OperatorArguments", ["narg", "names", "types"])


class CustomOp:
    """Base of a custom operator's computation; ``forward`` and ``backward`` get lists of
    NDArrays and ``req`` strings ('null', 'write', 'inplace', 'add')."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Write ``out_data`` from ``in_data`` (and ``aux``), honouring ``req``."""

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Write ``in_grad``; values not declared by ``declare_backward_dependency`` are
        None."""

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` as ``req`` says."""
        if req == "null":
            return
        key = () if is_np_array() else slice(None)
        if req in ("write", "inplace"):
            dst[key] = src
        elif req == "add":
            dst[key] += src
        else:
            raise MXNetError(f"CustomOp.assign: unknown req {req!r}; expected 'null', "
                             f"'write', 'inplace' or 'add'")


class CustomOpProp:
    """Base of a custom operator's description: argument, output and auxiliary state
    names, shape and type inference, backward dependencies, and ``create_operator``.
    Constructor keyword arguments arrive as strings (the op's parameters)."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """(input shapes, output shapes[, aux shapes]) from the argument shapes."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """(input types, output types[, aux types]) from the argument types."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        """(input, output[, aux]) storage types from the arguments' ('default', 'csr',
        'row_sparse'); this default accepts dense arguments only, as MXNet's does."""
        for i, stype in enumerate(in_stype):
            if stype != "default":
                raise MXNetError(f"{type(self).__name__}.infer_storage_type: in_stype[{i}] is "
                                 f"{stype!r}; the default implementation expects 'default' "
                                 f"only: implement infer_storage_type for sparse inputs")
        return (in_stype, ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        """Storage types of ``backward``'s arrays (output gradients, inputs, outputs, input
        gradients, aux states) after a forward on sparse arrays; this default: all dense."""
        return (["default"] * len(ograd_stype), ["default"] * len(in_stype),
                ["default"] * len(out_stype), ["default"] * len(igrad_stype),
                ["default"] * len(aux_stype))

    def list_outputs(self):
        return ["output"]

    def list_arguments(self):
        return ["data"]

    def list_auxiliary_states(self):
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Ids of the values ``backward`` reads (the output gradients only when
        ``need_top_grad``); the others are freed early and reach ``backward`` as None."""
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The ``CustomOp`` for one application: ``ctx`` a Context, ``in_shapes`` lists,
        ``in_dtypes`` MXNet type flags."""
        return CustomOp()


def register(reg_name):
    """Class decorator registering a ``CustomOpProp`` subclass as ``op_type=reg_name``."""
    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise MXNetError(f"operator.register({reg_name!r}): expected a CustomOpProp "
                             f"subclass, got {prop_cls!r}")
        _custom.props[reg_name] = prop_cls
        return prop_cls
    return do_register


def get_all_registered_operators():
    """Every registered operator name, aliases included (MXNet's ``MXListAllOpNames``)."""
    names = []
    for op in registry.list_ops():
        names += [op.name, *op.aliases]
    return names


def get_operator_arguments(op_name):
    """``OperatorArguments(narg, names, types)`` of ``op_name``: its array arguments, then
    its parameters, with MXNet's type strings."""
    op = registry.get(op_name)
    names = [a.name for a in op.arguments]
    types = [a.type for a in op.arguments]
    if op.param_model is not None:
        for name, info in op.param_model.model_fields.items():
            names.append(name)
            types.append(mxnet_type(info))
    return OperatorArguments(len(names), names, types)


class PythonOp:
    """Base of MXNet's older Python operators: override ``forward(in_data, out_data)``,
    ``backward(out_grad, in_data, out_data, in_grad)``, ``infer_shape``, ``list_arguments``
    and ``list_outputs``, then ``op.get_symbol(*inputs, name=...)`` (or ``op(...)``)."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """A Symbol applying this operator to ``args`` (``name=``/``attr=`` as any op)."""
        from . import symbol
        op_type = f"_python_op_{id(self)}"
        if op_type not in _custom.props:
            _custom.props[op_type] = _python_op_prop(self)
        return symbol.Custom(*args, op_type=op_type, **kwargs)

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        return ["output"]

    def list_arguments(self):
        return ["data"]

    def need_top_grad(self):
        return self.need_top_grad_

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = list(out_grad) if self.need_top_grad() else []
        return deps + list(in_data) + list(out_data)


class NumpyOp(PythonOp):
    """A ``PythonOp`` whose ``forward``/``backward`` get numpy arrays and fill the output
    (gradient) arrays in place."""


class NDArrayOp(PythonOp):
    """A ``PythonOp`` whose ``forward``/``backward`` get NDArrays."""


def _python_op_prop(op):
    """The ``CustomOpProp`` class running the PythonOp instance ``op``."""
    numpy_op = isinstance(op, NumpyOp)

    def run(fn, sources, targets, req, assign):
        if not numpy_op:
            return fn(*sources, targets)
        outs = [t.asnumpy() for t in targets]
        fn(*[[a.asnumpy() if a is not None else None for a in group] for group in sources],
           outs)
        for t, r, o in zip(targets, req, outs):
            assign(t, r, o)

    class Compute(CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            run(op.forward, [in_data], out_data, req, self.assign)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            run(op.backward, [out_grad, in_data, out_data], in_grad, req, self.assign)

    class Prop(CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=op.need_top_grad())

        def list_arguments(self):
            return op.list_arguments()

        def list_outputs(self):
            return op.list_outputs()

        def infer_shape(self, in_shape):
            ins, outs = op.infer_shape(in_shape)
            return ins, outs, []

        def declare_backward_dependency(self, out_grad, in_data, out_data):
            return op.declare_backward_dependency(out_grad, in_data, out_data)

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Compute()

    Prop.__name__ = f"{type(op).__name__}Prop"
    return Prop
