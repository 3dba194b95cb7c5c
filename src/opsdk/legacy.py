"""The seeds' legacy interface: ``OperatorProperty`` describes, ``Operator`` computes.

``register_property(name, PropClass)`` (or ``@register_property(name)``)
compiles a property class into an ``OpDef`` ``name`` and a hidden
``_backward_<name>``. The op's inputs are ``list_arguments()`` followed by
``list_auxiliary_states()``; aux states are reported by ``FMutateInputs``.
A property instance is made per parsed parameters (``self.param``) and
cached; ``create_operator(ctx)`` is cached per (parameters, context).

Backward dependency ids follow MXNet: ``out_grad`` ids, then ``in_data``
ids, then ``out_data`` ids (then ``in_grad`` ids for the in-place option).
"""

from __future__ import annotations

import inspect

from mxnext import ops as registry
from mxnext.base import ParamError
from mxnext.graph import NodeEntry

from ._builder import caller_module, register_op
from .grad import make_backward_node
from .shape import merge_out_shapes

__all__ = ["OperatorProperty", "Operator", "register_property"]


class Operator:
    """Computation; arrays are ``ctx.xp`` arrays, results written with ``assign``."""

    def forward(self, ctx, in_data, req, out_data, aux):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        raise NotImplementedError(f"{type(self).__name__}.backward")


class OperatorProperty:
    """Semantics of an op. Subclasses set ``param_model`` and override what differs."""

    param_model = None

    def __init__(self, param=None):
        self.param = param

    def list_arguments(self) -> list[str]:
        return ["data"]

    def list_outputs(self) -> list[str]:
        return ["output"]

    def list_auxiliary_states(self) -> list[str]:
        return []

    def num_outputs(self) -> int:
        return len(self.list_outputs())

    def num_visible_outputs(self) -> int:
        return self.num_outputs()

    def infer_shape(self, in_shape):
        """``in_shape`` (tuples or None) -> ``(in_shape, out_shape, aux_shape)``."""
        raise NotImplementedError(f"{type(self).__name__}.infer_shape")

    def infer_type(self, in_type):
        """Default: every array takes the first known input dtype."""
        known = next((t for t in in_type if t is not None), None)
        return ([known] * len(in_type), [known] * self.num_outputs(),
                [known] * len(self.list_auxiliary_states()))

    def forward_resource(self, in_shape) -> list:
        return []

    def backward_resource(self, in_shape) -> list:
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data) -> list[int]:
        return list(out_grad) + list(in_data) + list(out_data)

    def forward_inplace_option(self, in_data, out_data) -> list:
        return []

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad) -> list:
        return []

    def create_operator(self, ctx) -> Operator:
        raise NotImplementedError(f"{type(self).__name__}.create_operator")


class _Compiled:
    """Per-parameters caches and the attribute functions of one property class."""

    def __init__(self, name, prop_cls):
        self.name, self.prop_cls = name, prop_cls
        self._props: dict = {}
        self._ops: dict = {}
        self._layout: dict = {}

    def prop(self, params):
        p = self._props.get(params)
        if p is None:
            p = self._props[params] = self.prop_cls(params)
        return p

    def layout(self, params):
        """(n_args, n_aux, n_out, n_vis, deps) for these parameters."""
        lay = self._layout.get(params)
        if lay is None:
            p = self.prop(params)
            n_args, n_aux = len(p.list_arguments()), len(p.list_auxiliary_states())
            n_out, n_vis = p.num_outputs(), p.num_visible_outputs()
            ids = list(range(n_vis + n_args + n_out))
            deps = list(p.declare_backward_dependency(
                ids[:n_vis], ids[n_vis:n_vis + n_args], ids[n_vis + n_args:]))
            lay = self._layout[params] = (n_args, n_aux, n_out, n_vis, deps)
        return lay

    def operator(self, params, ctx):
        key = (params, ctx)
        op = self._ops.get(key)
        if op is None:
            op = self._ops[key] = self.prop(params).create_operator(ctx)
        return op

    # -- forward attributes --------------------------------------------------------------
    def num_inputs(self, params):
        n_args, n_aux = self.layout(params)[:2]
        return n_args + n_aux

    def input_names(self, params):
        p = self.prop(params)
        return list(p.list_arguments()) + list(p.list_auxiliary_states())

    def mutate_inputs(self, params):
        n_args, n_aux = self.layout(params)[:2]
        return list(range(n_args, n_args + n_aux))

    def infer_shape(self, params, ins, outs):
        n_args = self.layout(params)[0]
        i, o, a = self.prop(params).infer_shape(list(ins[:n_args]))
        return list(i) + list(a), merge_out_shapes(self.name, list(o), outs)

    def infer_type(self, params, ins, outs):
        n_args = self.layout(params)[0]
        i, o, a = self.prop(params).infer_type(list(ins[:n_args]))
        return list(i) + list(a), list(o)

    def inplace(self, params):
        n_args, _, n_out = self.layout(params)[:3]
        return list(self.prop(params).forward_inplace_option(list(range(n_args)),
                                                             list(range(n_out))))

    def compute(self, ctx, inputs, req, outputs, params):
        n_args = self.layout(params)[0]
        self.operator(params, ctx.ctx).forward(ctx, inputs[:n_args], req, outputs, inputs[n_args:])

    def gradient(self, node, out_grads):
        n_args, n_aux, n_out, n_vis, deps = self.layout(node.params)
        entries = (list(out_grads[:n_vis]) + list(node.inputs[:n_args])
                   + [NodeEntry(node, i, 0) for i in range(n_out)])
        bwd = make_backward_node(f"_backward_{self.name}", node,
                                 [entries[d] for d in deps] + list(node.inputs[n_args:]))
        return [NodeEntry(bwd, i, 0) for i in range(n_args)] + [None] * n_aux

    # -- backward attributes -------------------------------------------------------------
    def bwd_num_inputs(self, params):
        lay = self.layout(params)
        return len(lay[4]) + lay[1]

    def bwd_infer_shape(self, params, ins, outs):
        n_args, _, _, n_vis, deps = self.layout(params)
        by_id = dict(zip(deps, ins))
        grads = [by_id.get(n_vis + i) for i in range(n_args)]
        return list(ins), merge_out_shapes(f"_backward_{self.name}", grads, outs)

    def bwd_infer_type(self, params, ins, outs):
        known = next((t for t in list(ins) + list(outs) if t is not None), None)
        return [t if t is not None else known for t in ins], [known] * len(outs)

    def bwd_inplace(self, params):
        n_args, _, n_out, n_vis, deps = self.layout(params)
        base = n_vis + n_args + n_out
        ids = list(range(base + n_args))
        pairs = self.prop(params).backward_inplace_option(
            ids[:n_vis], ids[n_vis:n_vis + n_args], ids[n_vis + n_args:base], ids[base:])
        return [(deps.index(a), b - base) for a, b in pairs if a in deps]

    def bwd_compute(self, ctx, inputs, req, outputs, params):
        n_args, n_aux, n_out, n_vis, deps = self.layout(params)
        slots = [None] * (n_vis + n_args + n_out)
        for d, arr in zip(deps, inputs):
            slots[d] = arr
        aux = inputs[len(deps):]
        self.operator(params, ctx.ctx).backward(
            ctx, slots[:n_vis], slots[n_vis:n_vis + n_args], slots[n_vis + n_args:],
            req, outputs, aux)


def register_property(name: str, prop_cls=None, devices=("cpu",)):
    """Register an ``OperatorProperty`` subclass as op ``name`` (also a class decorator)."""
    if prop_cls is None:
        module = caller_module()
        return lambda cls: _register_property(name, cls, devices, module)
    return _register_property(name, prop_cls, devices, caller_module())


def _register_property(name, prop_cls, devices, module):
    with registry.providing(registry.current_provider(module)):
        _compile_property(name, prop_cls, devices)
    return prop_cls


def _compile_property(name, prop_cls, devices):
    c = _Compiled(name, prop_cls)
    fwd = register_op(name).set_attr_parser(prop_cls.param_model)
    if prop_cls.__dict__.get("__doc__"):
        fwd.describe(inspect.cleandoc(prop_cls.__doc__))
    fwd.opdef.arguments = []
    try:
        args = c.prop(fwd.opdef.parse_params({})).list_arguments()
    except ParamError:      # required parameters: the argument names depend on them
        args = ()
    for arg in args:
        fwd.add_argument(arg, "NDArray-or-Symbol", "")
    (fwd.set_num_inputs(c.num_inputs)
        .set_num_outputs(lambda params: c.layout(params)[2])
        .set_attr("FNumVisibleOutputs", lambda params: c.layout(params)[3])
        .set_attr("FListInputNames", c.input_names)
        .set_attr("FListOutputNames", lambda params: list(c.prop(params).list_outputs()))
        .set_attr("FMutateInputs", c.mutate_inputs)
        .set_attr("FInferShape", c.infer_shape)
        .set_attr("FInferType", c.infer_type)
        .set_attr("FInplaceOption", c.inplace)
        .set_attr("FResourceRequest", lambda params: list(c.prop(params).forward_resource(None)))
        .set_attr("FGradient", c.gradient))
    bwd = (register_op(f"_backward_{name}").describe(f"Backward of {name}.")
           .set_attr_parser(prop_cls.param_model)
           .set_num_inputs(c.bwd_num_inputs)
           .set_num_outputs(lambda params: c.layout(params)[0])
           .set_attr("TIsBackward", True)
           .set_attr("FInferShape", c.bwd_infer_shape)
           .set_attr("FInferType", c.bwd_infer_type)
           .set_attr("FInplaceOption", c.bwd_inplace)
           .set_attr("FResourceRequest",
                     lambda params: list(c.prop(params).backward_resource(None))))
    for dev in devices:
        fwd.set_attr(f"FCompute<{dev}>", c.compute)
        bwd.set_attr(f"FCompute<{dev}>", c.bwd_compute)
