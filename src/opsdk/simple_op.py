"""SimpleOp: unary and binary ops from a shape function, a forward and a gradient.

Function signatures follow the seeds with arrays for TBlobs and the
``OpContext`` for the RunContext (``ctx.xp`` is the array namespace)::

    forward:  fn(src, env, ret, req, ctx)                 fn(lhs, rhs, env, ret, req, ctx)
    gradient: fn(out_grad, [out_value | in_data...], env, in_grad..., req..., ctx)
    shape:    fn(src_shape, env) -> shape                 fn(lhs_shape, rhs_shape, env) -> shape

The gradient says what it reads with ``needs="out_grad" | "out_value" |
"in_data"``. Registration compiles to an ``OpDef`` ``name`` and a hidden
``_backward_<name>`` whose output ``i`` is the gradient of input ``i``.
"""

from __future__ import annotations

import inspect
from enum import IntEnum
from typing import NamedTuple

from mxnext import ops as registry
from mxnext.base import MXNetError, ShapeError
from mxnext.params import Field, Param

from ._builder import caller_module, register_op
from .grad import ElemwiseGradUseIn, ElemwiseGradUseNone, ElemwiseGradUseOut
from .shape import ElemwiseShape, ElemwiseType, merge_out_shapes

__all__ = ["SimpleOp", "simple_op", "EnvArguments", "SimpleOpInplaceOption", "NO_INPLACE",
           "INPLACE_IN_OUT", "INPLACE_OUT_IN", "INPLACE_LHS_OUT", "INPLACE_OUT_LHS"]


class SimpleOpInplaceOption(IntEnum):
    NO_INPLACE = 0        # no in-place sharing
    INPLACE_IN_OUT = 1    # unary: input shares memory with output
    INPLACE_OUT_IN = 2    # unary: out_grad shares memory with in_grad
    INPLACE_LHS_OUT = 3   # binary: lhs shares memory with output
    INPLACE_OUT_LHS = 4   # binary: out_grad shares memory with lhs_grad


NO_INPLACE, INPLACE_IN_OUT, INPLACE_OUT_IN, INPLACE_LHS_OUT, INPLACE_OUT_LHS = SimpleOpInplaceOption
_FWD_INPLACE = (INPLACE_IN_OUT, INPLACE_LHS_OUT)
_BWD_INPLACE = (INPLACE_OUT_IN, INPLACE_OUT_LHS)
_GRAD_RULES = {"out_grad": ElemwiseGradUseNone, "out_value": ElemwiseGradUseOut,
               "in_data": ElemwiseGradUseIn}


class EnvArguments(NamedTuple):
    """What SimpleOp functions get besides arrays: the scalar, the kwargs model, resources."""
    scalar: float | None
    kwargs: Param | None
    resource: list


class ScalarParam(Param):
    scalar: float = Field(description="The scalar argument of the op.")


def _inplace_pairs(pairs):
    return lambda params: pairs


class SimpleOp:
    """Builder for one SimpleOp; every setter recompiles the registered ``OpDef``s."""

    def __init__(self, name: str, _module: str | None = None):
        self.name = name
        self.bwd_name = f"_backward_{name}"
        # every setter registers for this provider, even when called later
        self.provider = registry.current_provider(_module or caller_module())
        with registry.providing(self.provider):
            self._fwd = register_op(name)
        self._bwd = None
        self.n_in = 1
        self.shape_fn = None
        self.functions: dict[str, object] = {}
        self.forward_inplace = NO_INPLACE
        self.gradients: dict[str, object] = {}
        self.grad_inplace = NO_INPLACE
        self.grad_needs = "out_grad"
        self.scalar = False
        self.kwargs_model = None
        self.resources: list = []
        self._compile()

    # -- the seeds' registration vocabulary --------------------------------------------
    def set_shape_function(self, fn) -> "SimpleOp":
        self.shape_fn = fn
        return self._compile()

    def set_function(self, fn, inplace=NO_INPLACE, device: str = "cpu", n_in: int | None = None):
        """Forward ``fn`` for ``device``; unary or binary from its arity unless ``n_in``."""
        self.n_in = n_in or (len(inspect.signature(fn).parameters) - 4)
        if self.n_in not in (1, 2):
            raise MXNetError(f"SimpleOp {self.name!r}: forward function must be unary "
                             f"(src, env, ret, req, ctx) or binary (lhs, rhs, env, ret, req, ctx)")
        self.functions[device] = fn
        self.forward_inplace = SimpleOpInplaceOption(inplace)
        return self._compile()

    def set_gradient(self, fn, inplace=NO_INPLACE, needs: str = "out_grad", device: str = "cpu"):
        if needs not in _GRAD_RULES:
            raise MXNetError(f"SimpleOp {self.name!r}: set_gradient needs= must be one of "
                             f"{', '.join(map(repr, _GRAD_RULES))}, got {needs!r}")
        self.gradients[device] = fn
        self.grad_inplace = SimpleOpInplaceOption(inplace)
        self.grad_needs = needs
        return self._compile()

    def set_enable_scalar(self, enable: bool = True) -> "SimpleOp":
        if enable and self.kwargs_model is not None:
            raise MXNetError(f"SimpleOp {self.name!r}: scalar and kwargs cannot both be enabled")
        self.scalar = enable
        return self._compile()

    def set_enable_kwargs(self, param_model) -> "SimpleOp":
        """Enable keyword arguments parsed by ``param_model`` (``env.kwargs``)."""
        if param_model is not None and self.scalar:
            raise MXNetError(f"SimpleOp {self.name!r}: scalar and kwargs cannot both be enabled")
        self.kwargs_model = param_model
        return self._compile()

    def set_resource_request(self, req) -> "SimpleOp":
        self.resources = list(req) if isinstance(req, (list, tuple)) else [req]
        return self._compile()

    def describe(self, text: str) -> "SimpleOp":
        self._fwd.describe(text)
        return self

    # -- compilation -------------------------------------------------------------------
    def _env_maker(self):
        scalar = self.scalar

        def env(params, requested):
            return EnvArguments(params.scalar if scalar else None, None if scalar else params,
                                requested)
        return env

    def _compile(self) -> "SimpleOp":
        with registry.providing(self.provider):
            self._compile_forward()
        return self

    def _compile_forward(self):
        n_in, env = self.n_in, self._env_maker()
        model = ScalarParam if self.scalar else self.kwargs_model
        b = self._fwd
        b.set_attr_parser(model)
        b.opdef.arguments = []
        for arg in (("data",) if n_in == 1 else ("lhs", "rhs")):
            b.add_argument(arg, "NDArray-or-Symbol", "Input operand.")
        b.set_num_inputs(n_in).set_num_outputs(1)
        b.set_attr("FInferShape", self._forward_shape(env))
        b.set_attr("FInferType", ElemwiseType(n_in, 1))
        b.set_attr("FInplaceOption",
                   _inplace_pairs([(0, 0)] if self.forward_inplace in _FWD_INPLACE else []))
        resources = list(self.resources)
        b.set_attr("FResourceRequest", lambda params: resources)
        for device, fn in self.functions.items():
            b.set_attr(f"FCompute<{device}>", _compute(fn, env))
        if self.gradients:
            b.set_attr("FGradient", _GRAD_RULES[self.grad_needs](self.bwd_name))
            self._compile_backward(model, env, resources)

    def _forward_shape(self, env):
        shape_fn, n_in, name = self.shape_fn, self.n_in, self.name
        if shape_fn is None:
            return ElemwiseShape(n_in, 1, name)

        def infer_shape(params, ins, outs):
            if any(s is None for s in ins):
                return list(ins), list(outs)
            out = tuple(shape_fn(*ins, env(params, ())))
            if outs[0] is not None and tuple(outs[0]) != out:
                raise ShapeError(f"Operator {name!r}: output shape {tuple(outs[0])} given, "
                                 f"but the inputs {list(ins)} give {out}")
            return list(ins), [out]
        return infer_shape

    def _compile_backward(self, model, env, resources):
        n_in, needs = self.n_in, self.grad_needs
        n_extra = {"out_grad": 0, "out_value": 1, "in_data": n_in}[needs]
        if self._bwd is None:
            self._bwd = register_op(self.bwd_name)     # inside _compile's providing block
        b = self._bwd
        b.describe(f"Backward of {self.name}.").set_attr_parser(model)
        b.set_num_inputs(1 + n_extra).set_num_outputs(n_in).set_attr("TIsBackward", True)
        b.set_attr("FInferShape",
                   _backward_shape(self.bwd_name, needs, n_in, self.shape_fn is None))
        b.set_attr("FInferType", ElemwiseType(-1, n_in))
        b.set_attr("FInplaceOption",
                   _inplace_pairs([(0, 0)] if self.grad_inplace in _BWD_INPLACE else []))
        b.set_attr("FResourceRequest", lambda params: resources)
        for device, fn in self.gradients.items():
            b.set_attr(f"FCompute<{device}>", _compute(fn, env))


def _compute(fn, env):
    def compute(ctx, inputs, req, outputs, params):
        fn(*inputs, env(params, ctx.requested), *outputs, *req, ctx)
    compute.__name__ = getattr(fn, "__name__", "compute")
    return compute


def _backward_shape(name, needs, n_in, same_shape):
    def infer_shape(params, ins, outs):
        if needs == "in_data":
            grads = list(ins[1:1 + n_in])
        elif same_shape:
            grads = [ins[0]] * n_in
        else:
            grads = list(outs)
        return list(ins), merge_out_shapes(name, grads, outs)
    return infer_shape


def simple_op(name: str) -> SimpleOp:
    """Start a SimpleOp registration (``MXNET_REGISTER_SIMPLE_OP(name, ...)``)."""
    return SimpleOp(name, caller_module())
