"""Forward, backward and numeric-gradient checks for ops run by the harness."""

from __future__ import annotations

import numpy as np

from mxnext.base import MXNetError

from ._graph import eval_gradients
from ._harness import infer, op_def, parse, run_op

__all__ = ["numeric_gradient", "check_numeric_gradient", "check_forward", "check_backward"]


def _close(name, got, want, rtol, atol):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise AssertionError(f"{name}: shape {got.shape} != expected {want.shape}")
    if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        raise AssertionError(f"{name}: max abs error {np.nanmax(err):.3g} (rtol={rtol}, "
                             f"atol={atol})\n got {got}\n expected {want}")


def _visible(opdef, p):
    return opdef.num_visible_outputs(p)


def numeric_gradient(f, inputs, index, eps):
    """Central-difference gradient of scalar ``f(inputs)`` wrt ``inputs[index]``."""
    x = inputs[index]
    grad = np.zeros(x.shape, np.float64)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        flat[k] = old + eps
        hi = f(inputs)
        flat[k] = old - eps
        lo = f(inputs)
        flat[k] = old
        gflat[k] = (hi - lo) / (2 * eps)
    return grad


def _float64_ok(opdef, p, inputs):
    types = [np.dtype(np.float64) if np.issubdtype(a.dtype, np.floating) else a.dtype
             for a in inputs]
    try:
        infer(opdef, p, [a.shape for a in inputs], types)
    except MXNetError:
        return False
    return True


def check_numeric_gradient(op, inputs, params=None, grad_inputs=None, rtol=1e-2, atol=1e-3,
                           eps=None, seed=0):
    """Compare the op's ``FGradient`` with central differences of
    ``sum(out_k * head_k)`` over visible outputs (float64 when the op takes it).

    ``grad_inputs``: indices to check (default every float input).
    """
    opdef = op_def(op)
    p = parse(opdef, params)
    inputs = [np.array(a) for a in inputs]
    if grad_inputs is None:
        grad_inputs = [i for i, a in enumerate(inputs) if np.issubdtype(a.dtype, np.floating)]
    wide = _float64_ok(opdef, p, inputs)
    if wide:
        inputs = [a.astype(np.float64) if np.issubdtype(a.dtype, np.floating) else a
                  for a in inputs]
    if eps is None:
        eps = 1e-6 if wide else 1e-3
    outs = run_op(opdef, [a.copy() for a in inputs], p, seed=seed)
    rng = np.random.default_rng(seed)
    n_vis = _visible(opdef, p)
    heads = [rng.uniform(-1, 1, o.shape).astype(o.dtype) if k < n_vis else np.zeros_like(o)
             for k, o in enumerate(outs)]

    def loss(xs):
        ys = run_op(opdef, [a.copy() for a in xs], p, seed=seed)
        return sum(float(np.sum(y.astype(np.float64) * h)) for y, h in zip(ys[:n_vis], heads))

    grads = eval_gradients(opdef, [a.copy() for a in inputs], heads, p, outs, seed=seed)
    for i in grad_inputs:
        want = numeric_gradient(loss, inputs, i, eps)
        got = np.zeros_like(want) if grads[i] is None else grads[i]
        _close(f"{opdef.name}: gradient of input {i}", got, want, rtol, atol)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def check_forward(op, inputs, expected, params=None, rtol=1e-5, atol=1e-6, seed=None):
    """Run ``op`` and compare its visible outputs with ``expected`` (array or list)."""
    opdef = op_def(op)
    p = parse(opdef, params)
    outs = run_op(opdef, [np.array(a) for a in inputs], p, seed=seed)
    expected = _as_list(expected)
    outs = outs[:_visible(opdef, p)]
    if len(outs) != len(expected):
        raise AssertionError(f"{opdef.name}: {len(outs)} outputs, {len(expected)} expected")
    for k, (got, want) in enumerate(zip(outs, expected)):
        want = np.asarray(want)
        if got.dtype != want.dtype:
            raise AssertionError(f"{opdef.name}: output {k} dtype {got.dtype} != {want.dtype}")
        _close(f"{opdef.name}: output {k}", got, want, rtol, atol)
    return outs


def check_backward(op, inputs, out_grads, expected, params=None, rtol=1e-5, atol=1e-6):
    """Evaluate ``FGradient`` for head gradients ``out_grads``; compare with
    ``expected`` (one array per input, None to skip one)."""
    opdef = op_def(op)
    inputs = [np.array(a) for a in inputs]
    grads = eval_gradients(opdef, inputs, [np.asarray(g) for g in _as_list(out_grads)], params)
    for i, want in enumerate(_as_list(expected)):
        if want is None:
            continue
        got = np.zeros(inputs[i].shape) if grads[i] is None else grads[i]
        _close(f"{opdef.name}: gradient of input {i}", got, want, rtol, atol)
    return grads
