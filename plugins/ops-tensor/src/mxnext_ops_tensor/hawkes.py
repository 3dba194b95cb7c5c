"""_contrib_hawkesll (MXNet's ``contrib/hawkes_ll.cc``): the log-likelihood of a batch of marked
self-exciting Hawkes processes with exponential kernels, and its gradient. The sweeps are
in ``_hawkes_kernels``."""

from __future__ import annotations

import numpy as np
from opsdk import ElemwiseGradUseIn, FloatOnly, MXNetError, TypeInferError, register_op
from opsdk.shape import dim_known, merge_shape, unknown_dim

from . import _hawkes_kernels as kernels
from ._common import put
from ._layout import fail

_OP, _BACK = "_contrib_hawkesll", "_contrib_backward_hawkesll"
# input / output name -> its axes: N sequences, K marks, T time steps
_INPUTS = (("lda", "NK"), ("alpha", "K"), ("beta", "K"), ("state", "NK"), ("lags", "NT"),
           ("marks", "NT"), ("valid_length", "N"), ("max_time", "N"))
_OUTPUTS = (("output", "N"), ("out_state", "NK"))
_MARKS = 5
_AXES = {"N": "batch size N", "K": "number of marks K", "T": "sequence length T"}
_INT32 = np.dtype(np.int32)


def _dims(op, named):
    """N, K and T from every (name, axes, shape) known; ShapeError on a disagreement."""
    dims, source = dict.fromkeys("NKT", unknown_dim()), {}
    for name, axes, s in named:
        if s is None:
            continue
        if len(s) != len(axes):
            fail(op, f"{name} must have {len(axes)} dim(s) ({', '.join(axes)}), got shape "
                     f"{tuple(s)}")
        for ax, v in zip(axes, s):
            if dim_known(v) and dim_known(dims[ax]) and v != dims[ax]:
                fail(op, f"{name} has shape {tuple(s)}: {_AXES[ax]} {v}, but {source[ax]} "
                         f"gives {dims[ax]}")
            if dim_known(v) and not dim_known(dims[ax]):
                dims[ax], source[ax] = v, name
    return dims


def _shapes(op, layout, shapes, dims):
    return [merge_shape(op, s, tuple(dims[a] for a in axes), name)
            for (name, axes), s in zip(layout, shapes)]


def _infer_shape(p, ins, outs):
    """lda, state (N, K); alpha, beta (K,); lags, marks (N, T); valid_length, max_time (N,)
    give output (N,) and out_state (N, K); partial shapes fill each other."""
    named = [(n, a, s) for (n, a), s in zip(_INPUTS + _OUTPUTS, list(ins) + list(outs))]
    dims = _dims(_OP, named)
    return _shapes(_OP, _INPUTS, ins, dims), _shapes(_OP, _OUTPUTS, outs, dims)


def _agree(op, typed):
    """The one dtype of ``typed`` ((name, dtype) pairs, None unknown); TypeInferError names the
    two that differ."""
    known = [(n, np.dtype(t)) for n, t in typed if t is not None]
    for n, t in known[1:]:
        if t != known[0][1]:
            raise TypeInferError(f"Operator {op!r}: {n} has dtype {t.name}, but {known[0][0]} "
                                 f"has {known[0][1].name}; all but marks share one dtype")
    return known[0][1] if known else None


def _check_marks(op, dtype):
    if dtype is not None and np.dtype(dtype) != _INT32:
        raise TypeInferError(f"Operator {op!r}: input 'marks' has dtype {np.dtype(dtype).name}, "
                             f"expected int32")


def _infer_type(p, ins, outs):
    """Every input but marks (int32) and both outputs share lda's floating dtype."""
    _check_marks(_OP, ins[_MARKS])
    named = [(n, t) for (n, _), t in zip(_INPUTS + _OUTPUTS, list(ins) + list(outs))
             if n != "marks"]
    t = _agree(_OP, named)
    if t is None:
        return list(ins)[:_MARKS] + [_INT32] + list(ins)[_MARKS + 1:], list(outs)
    return [_INT32 if i == _MARKS else t for i in range(len(ins))], [t, t]


def _steps(op, xp, marks, valid_length, k):
    """Events per sequence: ``valid_length`` rounded up (MXNet reads while j < valid_length),
    negatives as 0; over T, NaN or a mark outside [0, K) in the valid part is an error."""
    t = marks.shape[1]
    over = xp.isnan(valid_length) | (valid_length > t)
    if bool(over.any()):
        raise MXNetError(f"Operator {op!r}: valid_length must be within [0, T={t}], got "
                         f"{valid_length[over][:8].tolist()}")
    steps = xp.ceil(xp.maximum(valid_length, 0)).astype(np.int64)
    valid = xp.arange(t)[None, :] < steps[:, None]
    bad = valid & ((marks < 0) | (marks >= k))
    if bool(bad.any()):
        raise MXNetError(f"Operator {op!r}: marks must lie in [0, K={k}) within valid_length, "
                         f"got {marks[bad][:8].tolist()}")
    return steps


def _forward(ctx, inputs, req, outputs, params):
    lda, alpha, beta, state, lags, marks, valid_length, max_time = inputs
    steps = _steps(_OP, ctx.xp, marks, valid_length, lda.shape[1])
    ll, out_state, _ = kernels.forward(ctx.xp, lda, alpha, beta, state, lags, marks, steps,
                                       max_time)
    put(outputs[0], req[0], ll)
    put(outputs[1], req[1], out_state)


def _backward(ctx, inputs, req, outputs, params):
    """Gradients of lda, alpha, beta, state, lags and max_time (marks and valid_length: 0)."""
    og, og_state, lda, alpha, beta, state, lags, marks, valid_length, max_time = inputs
    steps = _steps(_BACK, ctx.xp, marks, valid_length, lda.shape[1])
    grads = kernels.backward(ctx.xp, og, og_state, lda, alpha, beta, state, lags, marks, steps,
                             max_time)
    for k, g in zip((0, 1, 2, 3, 4, 7), grads):
        put(outputs[k], req[k], g)
    for k in (5, 6):
        put(outputs[k], req[k], ctx.xp.zeros(outputs[k].shape, outputs[k].dtype))


def _backward_shape(p, ins, outs):
    named = [(n, a, s) for (n, a), s in zip(_OUTPUTS + _INPUTS, ins)]
    named += [(f"gradient of {n}", a, s) for (n, a), s in zip(_INPUTS, outs)]
    dims = _dims(_BACK, named)
    ins = _shapes(_BACK, _OUTPUTS + _INPUTS, ins, dims)
    return ins, _shapes(_BACK, _INPUTS, outs, dims)


def _backward_type(p, ins, outs):
    _check_marks(_BACK, ins[2 + _MARKS])
    named = [(n, t) for n, t in zip(["head gradient", "out_state head gradient"] +
                                    [n for n, _ in _INPUTS], ins) if n != "marks"]
    t = _agree(_BACK, named)
    if t is None:
        return list(ins), list(outs)
    types = [_INT32 if i == _MARKS else t for i in range(len(_INPUTS))]
    return [t, t] + types, types


def _example(dtype="float32"):
    """Two sequences, three marks: valid lengths 5 and 3 of T = 6, observed up to 6 and 4.5."""
    f = np.dtype(dtype).type
    return [np.array([[1.5, 2.0, 0.5], [1.0, 0.5, 2.5]], f), np.array([0.2, 0.6, 0.4], f),
            np.array([1.0, 2.0, 3.0], f), np.array([[0.5, 0.0, 0.2], [1.0, 2.0, 0.3]], f),
            np.array([[0.6, 0.7, 0.8, 0.9, 0.3, 2.0], [1.0, 0.2, 0.3, 9.0, 9.0, 9.0]], f),
            np.array([[0, 1, 2, 1, 0, 7], [1, 1, 0, -1, 5, 0]], np.int32),
            np.array([5, 3], f), np.array([6.0, 4.5], f)]


(register_op(_OP)
    .describe("Log-likelihood of N marked self-exciting Hawkes processes with exponential "
              "kernels: mark k has intensity lda[k] + alpha[k] beta[k] sum over its past events "
              "of exp(-beta[k] (t - t_i)). lags (N, T) are inter-arrival times and marks (N, T, "
              "int32) the mark of each event; the first valid_length[i] of row i are read, and "
              "row i is observed on (0, max_time[i]]. state (N, K) carries each mark's memory "
              "from before the batch; out_state is that memory at max_time.")
    .set_num_inputs(8).set_num_outputs(2)
    .set_attr("FListInputNames", lambda p: [n for n, _ in _INPUTS])
    .set_attr("FListOutputNames", lambda p: [n for n, _ in _OUTPUTS])
    .set_attr("FInferShape", _infer_shape)
    .set_attr("FInferType", FloatOnly(_infer_type, inputs=(0, 1, 2, 3, 4, 6, 7)))
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", ElemwiseGradUseIn(_BACK))
    .set_attr("TExamples", [
        {"inputs": _example(), "grad": False},
        {"inputs": _example("float64"), "grad": [0, 1, 2, 3, 4, 7], "rtol": 1e-4,
         "atol": 1e-6}])
    .add_argument("lda", "NDArray-or-Symbol", "Shape (N, K): each sequence's background "
                                              "intensity of each mark")
    .add_argument("alpha", "NDArray-or-Symbol", "Shape (K,): the branching ratio of each mark")
    .add_argument("beta", "NDArray-or-Symbol", "Shape (K,): the decay rate of each mark")
    .add_argument("state", "NDArray-or-Symbol", "Shape (N, K): each mark's Hawkes state")
    .add_argument("lags", "NDArray-or-Symbol", "Shape (N, T): the inter-arrival times")
    .add_argument("marks", "NDArray-or-Symbol", "Shape (N, T), int32: the mark of each event")
    .add_argument("valid_length", "NDArray-or-Symbol", "Shape (N,): valid events per row")
    .add_argument("max_time", "NDArray-or-Symbol", "Shape (N,): the end of each row's "
                                                   "observation period"))

(register_op(_BACK)
    .describe("Gradient of _contrib_hawkesll: inputs (head gradients of output and out_state, "
              "then the forward inputs), outputs one gradient per forward input.")
    .set_attr("TIsBackward", True)
    .set_num_inputs(10).set_num_outputs(8)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", _backward_type)
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [{"inputs": [np.array([1.0, -0.5], np.float32),
                                        np.full((2, 3), 0.25, np.float32)] + _example()}]))
