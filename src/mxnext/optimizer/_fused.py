"""MXNet's fused update ops that no plugin provides yet, in NDArray arithmetic.

The optimizers call MXNet's fused ops through ``mx.nd`` (ops-nn provides ``sgd_update``,
``sgd_mom_update``, ``nag_mom_update``, ``adam_update``, ``rmsprop(alex)_update``,
``ftml_update``, ``ftrl_update``, ``signsgd_update``, ``signum_update`` and
``multi_sgd(_mom)_update``). MXNet's multi-precision variants (``mp_sgd_update``,
``mp_sgd_mom_update``, ``mp_nag_mom_update``) and LAMB's two phases are missing; these
functions take the same arguments and give the same results: a multi-precision op is its
float32 op run on the float32 master copy (the gradient cast to float32) and the master
cast back into the float16 weight, which is what MXNet's kernels compute.
"""

import numpy

from .. import ndarray as nd


def _master_step(op, weight, grad, weight32, states, kwargs):
    op(weight32, grad.astype(numpy.float32), *states, out=weight32, **kwargs)
    nd.cast(weight32, dtype=weight.dtype, out=weight)


def mp_sgd_update(weight, grad, weight32, **kwargs):
    _master_step(nd.sgd_update, weight, grad, weight32, (), kwargs)


def mp_sgd_mom_update(weight, grad, mom, weight32, **kwargs):
    _master_step(nd.sgd_mom_update, weight, grad, weight32, (mom,), kwargs)


def mp_nag_mom_update(weight, grad, mom, weight32, **kwargs):
    _master_step(nd.nag_mom_update, weight, grad, weight32, (mom,), kwargs)


def lamb_update_phase1(weight, grad, mean, var, *, beta1, beta2, epsilon, t, bias_correction,
                       wd, rescale_grad=1.0, clip_gradient=-1.0):
    """Updates ``mean`` and ``var`` in place; returns LAMB's step direction ``g`` (Adam's
    step plus ``wd * weight``)."""
    g = grad * rescale_grad
    if clip_gradient >= 0:
        g = nd.clip(g, -clip_gradient, clip_gradient)
    mean[:] = beta1 * mean + (1. - beta1) * g
    var[:] = beta2 * var + (1. - beta2) * g * g
    if bias_correction:
        m, v = mean / (1. - beta1 ** t), var / (1. - beta2 ** t)
    else:
        m, v = mean, var
    return m / (nd.sqrt(v) + epsilon) + wd * weight


def lamb_update_phase2(weight, g, r1, r2, *, lr, lower_bound=-1.0, upper_bound=-1.0):
    """``weight -= lr * r1 / r2 * g`` in place, ``r1`` (the weight's norm) first bounded;
    ``lr`` alone when either norm is 0. ``r1``, ``r2``: one-element NDArrays."""
    r1, r2 = float(r1.asscalar()), float(r2.asscalar())
    if lower_bound >= 0:
        r1 = max(r1, lower_bound)
    if upper_bound >= 0:
        r1 = min(r1, upper_bound)
    if r1 != 0 and r2 != 0:
        lr = lr * r1 / r2
    weight[:] = weight - lr * g
