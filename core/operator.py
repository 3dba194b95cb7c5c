"""MXNet's ``mx.operator``: custom operators written in Python (``CustomOp``/``CustomOpProp``,
``register``), run by ``mx.nd.Custom(*inputs, op_type=name, **kwargs)``.

The operator's ``forward``/``backward`` run on the calling thread and use ordinary
``mx.nd`` calls, which the engine schedules as usual; while recording, ``Custom``
becomes one autograd node whose gradient is the operator's ``backward``.
"""

from __future__ import annotations

from . import _tape, autograd
from .base import MXNetError, did_you_mean

__all__ = ["CustomOp", "CustomOpProp", "register", "Custom"]

_props: dict = {}


class CustomOp:
    """Base of a custom operator's computation."""

    def forward(self, is_train, req, in_data, out_data, aux):
        raise NotImplementedError

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        raise NotImplementedError

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` as ``req`` says ('null', 'write', 'inplace', 'add')."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] = dst + src
        else:
            raise MXNetError(f"CustomOp.assign: unknown req {req!r}")


class CustomOpProp:
    """Base of a custom operator's properties: names, shapes, types, and its factory."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def list_auxiliary_states(self):
        return []

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]] * len(self.list_outputs()), \
            [in_shape[0]] * len(self.list_auxiliary_states())

    def infer_type(self, in_type):
        return in_type, [in_type[0]] * len(self.list_outputs()), \
            [in_type[0]] * len(self.list_auxiliary_states())

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = list(in_data) + list(out_data)
        return deps + list(out_grad) if self.need_top_grad_ else deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return CustomOp()


def register(reg_name):
    """Class decorator registering a ``CustomOpProp`` subclass as ``op_type=reg_name``."""
    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise MXNetError(f"operator.register({reg_name!r}): expected a CustomOpProp "
                             f"subclass, got {prop_cls!r}")
        _props[reg_name] = prop_cls
        return prop_cls
    return do_register


class _CustomBackward:
    """Adapter giving autograd a ``backward(*out_grads)`` for one recorded ``Custom`` call."""

    def __init__(self, op, in_data, out_data, aux):
        self.op, self.in_data, self.out_data, self.aux = op, in_data, out_data, aux

    def backward(self, *out_grads):
        from .ndarray import zeros
        in_grad = [zeros(a.shape, a.context, a.dtype) for a in self.in_data]
        self.op.backward(["write"] * len(in_grad), list(out_grads), self.in_data,
                         self.out_data, in_grad, self.aux)
        return in_grad


def Custom(*inputs, op_type=None, **kwargs):
    """Run the custom operator registered as ``op_type``; extra kwargs go to its
    ``CustomOpProp`` constructor as strings (as in MXNet)."""
    import numpy as np

    from .ndarray import empty
    prop_cls = _props.get(op_type)
    if prop_cls is None:
        raise MXNetError(f"Custom: op_type {op_type!r} is not registered"
                         f"{did_you_mean(str(op_type), _props)}; registered: "
                         f"{', '.join(sorted(_props)) or 'none'}")
    prop = prop_cls(**{k: str(v) for k, v in kwargs.items()})
    n_arg, n_aux = len(prop.list_arguments()), len(prop.list_auxiliary_states())
    if len(inputs) != n_arg + n_aux:
        raise MXNetError(f"Custom({op_type!r}): expected {n_arg} argument(s) "
                         f"{prop.list_arguments()} and {n_aux} auxiliary state(s), got "
                         f"{len(inputs)} input(s)")
    in_data, aux = list(inputs[:n_arg]), list(inputs[n_arg:])
    ctx = in_data[0].context if in_data else None
    in_shapes = [list(a.shape) for a in in_data]
    _, out_shapes, _ = prop.infer_shape(in_shapes)
    _, out_types, _ = prop.infer_type([a.dtype for a in in_data])
    outs = [empty(tuple(s), ctx, np.dtype(t)) for s, t in zip(out_shapes, out_types)]
    op = prop.create_operator(ctx, in_shapes, [a.dtype for a in in_data])
    training = autograd.is_training()
    with autograd.pause(train_mode=training):
        op.forward(training, ["write"] * len(outs), in_data, outs, aux)
    if autograd.is_recording():
        fn = _tape.FunctionOp(_CustomBackward(op, in_data, outs, aux), len(outs),
                                  len(in_data), name=op_type)
        _tape.record(fn, None, in_data, outs)
    return outs[0] if len(outs) == 1 else outs
