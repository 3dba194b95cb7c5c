"""moments (MXNet's ``nn/moments.cc``): the mean and the (population) variance of data over
``axes``, and its backward ``_backward_moments``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

import numpy as np
from opsdk import ElemwiseGradUseInOut, Field, Param, TypeInferError, register_op

from ._common import check_outs, put
from ._layout import fail
from .reduce import reduce_axes, reduced_shape


class MomentsParam(Param):
    axes: Optional[tuple[int, ...]] = Field(
        None, description="Array of ints. Axes along which to compute mean and variance.")
    keepdims: bool = Field(False, description="produce moments with the same dimensionality "
                                              "as the input.")


def _check_axes(params):
    if not params.axes:
        fail("moments", f"axes must name at least one axis (pass every axis for global moments), "
                        f"got axes={params.axes}")


def _axes(params, ndim):
    _check_axes(params)
    return reduce_axes("moments", SimpleNamespace(axis=params.axes), ndim)


def _shape(params, ins, outs):
    if ins[0] is None:
        _check_axes(params)
        return list(ins), list(outs)
    x = tuple(ins[0])
    out = reduced_shape(x, _axes(params, len(x)), params.keepdims)
    return [x], check_outs("moments", outs, [out, out])


def _type(params, ins, outs):
    """Both outputs share the data's dtype (known from any of the three)."""
    known = [np.dtype(t) for t in (ins[0], *outs) if t is not None]
    if not known:
        return list(ins), list(outs)
    for t in known[1:]:
        if t != known[0]:
            raise TypeInferError(f"Operator 'moments': data and outputs must share one dtype, "
                                 f"got {[str(k) for k in known]}")
    return [known[0]], [known[0], known[0]]


def _acc(x):
    return np.float32 if x.dtype == np.float16 else x.dtype


def _moments(ctx, inputs, req, outputs, params):
    """Mean, then the mean of squared deviations from it (both written once computed, so the
    mean may share the data's memory)."""
    x = inputs[0]
    axes = _axes(params, x.ndim)
    mean = x.mean(axis=axes, dtype=_acc(x), keepdims=True)
    dev = x - mean.astype(x.dtype)
    var = (dev * dev).mean(axis=axes, dtype=_acc(x), keepdims=True)
    put(outputs[0], req[0], mean.reshape(outputs[0].shape))
    put(outputs[1], req[1], var.reshape(outputs[1].shape))


def _moments_backward(ctx, inputs, req, outputs, params):
    """d/dx of (mean, var): ``g_mean / N + g_var * 2 (x - mean) / N``, N the count reduced."""
    g_mean, g_var, x, mean, _ = inputs
    axes = _axes(params, x.ndim)
    kept = reduced_shape(x.shape, axes, True)
    n = x.size // max(1, int(np.prod(kept)))
    grad = (g_mean.reshape(kept) + g_var.reshape(kept) * 2 * (x - mean.reshape(kept))) / n
    out = outputs[0]
    put(out, req[0], ctx.xp.broadcast_to(grad, out.shape))


def _backward_shape(params, ins, outs):
    x = ins[2] if ins[2] is not None else outs[0]
    return list(ins), check_outs("_backward_moments", outs, [x])


def _backward_type(params, ins, outs):
    t = next((v for v in (ins[2], *ins, outs[0]) if v is not None), None)
    return [t if v is None else v for v in ins], [t]


def _numpy_ref(x, axes, keepdims=False):
    """Also MXNet's integer moments: the mean truncated, the variance taken around it."""
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    mean = x.mean(axis=axes, keepdims=True, dtype=np.float64)
    if x.dtype.kind in "iu":
        mean = np.trunc(mean)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=keepdims)
    mean = mean if keepdims else np.squeeze(mean, axes)
    shape = mean.shape or (1,)
    return mean.reshape(shape).astype(x.dtype), var.reshape(shape).astype(x.dtype)


(register_op("moments")
    .describe("Mean and variance of data over axes: moments(x, axes=(0,)) of "
              "[[1, 2, 3], [4, 5, 6]] is ([2.5, 3.5, 4.5], [2.25, 2.25, 2.25]).")
    .set_attr_parser(MomentsParam).set_num_inputs(1).set_num_outputs(2)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", _type)
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _moments)
    .set_attr("FGradient", ElemwiseGradUseInOut("_backward_moments"))
    .set_attr("TExamples", [
        {"inputs": [(3, 4)], "params": {"axes": (0,)}, "ref": _numpy_ref, "int_ref": _numpy_ref},
        {"inputs": [(2, 3, 4)], "params": {"axes": (0, 2), "keepdims": True},
         "ref": _numpy_ref, "int_ref": _numpy_ref},
        {"inputs": [(2, 3)], "params": {"axes": (0, 1)}, "dtype": "float64", "ref": _numpy_ref,
         "int_ref": _numpy_ref},
        {"inputs": [(3, 1)], "params": {"axes": (-1,)}, "int_ref": _numpy_ref},
        {"inputs": [(4, 5)], "params": {"axes": (1,)}, "dtype": "float16", "grad": False,
         "int_ref": _numpy_ref}])
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray"))

(register_op("_backward_moments")
    .describe("Gradient of moments wrt its data.")
    .set_attr_parser(MomentsParam).set_attr("TIsBackward", True)
    .set_num_inputs(5).set_num_outputs(1)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", _backward_type)
    .set_attr("FCompute<cpu>", _moments_backward)
    .set_attr("TExamples", [{"inputs": [(3,), (3,), (2, 3), (3,), (3,)],
                             "params": {"axes": (0,)}}]))
