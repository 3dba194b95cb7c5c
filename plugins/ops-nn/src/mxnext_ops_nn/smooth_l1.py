"""smooth_l1, written as the seeds' SimpleOp example: a shape function, a forward function and a
gradient that declares it reads the input data.

    f(x) = 0.5 * (sigma * x)**2   if |x| < 1 / sigma**2
           |x| - 0.5 / sigma**2   otherwise

``sigma`` is the op's scalar. It arrives through ``env.kwargs`` rather than
``env.scalar``: MXNet 1.9's smooth_l1 takes ``scalar`` with a default of 1 and
an ``is_int`` flag, and opsdk's scalar mode (``set_enable_scalar``) makes
``scalar`` required and knows no ``is_int``, so symbol files that rely on the
default would not load.
"""

from __future__ import annotations

import numpy as np
from opsdk import INPLACE_IN_OUT, INPLACE_OUT_IN, Field, Param, assign, register_op, simple_op


class SmoothL1Param(Param):
    scalar: float = Field(1.0, description="sigma, which sets where the quadratic part ends.")
    is_int: bool = Field(True, description="MXNet's integer-scalar flag (accepted; smooth_l1 "
                                           "ignores it).")


def smooth_l1_shape(src, env):
    return src


def smooth_l1_forward(src, env, ret, req, ctx):
    xp = ctx.xp
    sigma2 = env.kwargs.scalar ** 2
    a = xp.abs(src)
    loss = xp.where(a > 1.0 / sigma2, a - 0.5 / sigma2, 0.5 * src * src * sigma2)
    assign(ret, req, loss.astype(ret.dtype, copy=False))


def smooth_l1_gradient(out_grad, in_data, env, in_grad, req, ctx):
    xp = ctx.xp
    sigma2 = env.kwargs.scalar ** 2
    slope = xp.clip(in_data * sigma2, -1.0, 1.0)     # sign(x) outside, sigma^2 * x inside
    assign(in_grad, req, (out_grad * slope).astype(in_grad.dtype, copy=False))


(simple_op("smooth_l1")
    .describe("Smooth L1 loss of ``data`` with ``scalar`` sigma: ``0.5 * (sigma * x)**2`` where "
              "``|x| < 1 / sigma**2``, ``|x| - 0.5 / sigma**2`` elsewhere.")
    .set_enable_kwargs(SmoothL1Param)
    .set_shape_function(smooth_l1_shape)
    .set_function(smooth_l1_forward, inplace=INPLACE_IN_OUT)
    .set_gradient(smooth_l1_gradient, inplace=INPLACE_OUT_IN, needs="in_data"))


def _ref(x, scalar=1.0, **_):
    s2, a = float(scalar) ** 2, np.abs(x.astype(np.float64))
    return np.where(a > 1 / s2, a - 0.5 / s2, 0.5 * a * a * s2).astype(x.dtype)


# examples for the conformance suite: both branches, and the default sigma
register_op("smooth_l1").set_attr("TTruncatesIntegers", True).set_attr("TExamples", [
    {"inputs": [(3, 4)], "domain": (-2, 2), "params": {"scalar": 2.0}, "ref": _ref},
    {"inputs": [(5,)], "domain": (-3, 3), "ref": _ref},
    {"inputs": [(2, 3)], "dtype": "float64", "domain": (-1, 1), "params": {"scalar": "0.5"},
     "ref": _ref}])
