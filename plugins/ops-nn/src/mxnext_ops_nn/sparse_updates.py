"""Optimizer updates with row_sparse gradients (MXNet 1.9's sparse optimizer kernels), and the
two AdaGrad ops MXNet has for them: ``_sparse_adagrad_update`` and
``_contrib_group_adagrad_update``.

With a row_sparse gradient and ``lazy_update`` (ftrl and the AdaGrad ops: always), only the
rows the gradient holds change, weight decay included: the dense rule runs on those rows
of the weight and its states. With ``lazy_update=False`` the update is the dense one over
every row. A row_sparse weight or state keeps its stored rows plus the updated ones.
"""

from __future__ import annotations

import numpy as np
from opsdk import (ElemwiseType, Field, FloatOnly, Param, ParamError, assign, extend_op,
                   register_op)
from opsdk.sparse import RowSparseStorage, stype_of, to_dense

from ._infer import out_shapes
from .optimizer import _adam, _clip, _ftrl, _sgd, _sgd_mom


def _sparse_update(rule, op):
    """The ``FComputeSparse`` kernel of an update whose dense rule is ``rule(xp, params,
    weight, grad, *states) -> new weight`` (states written in place)."""
    def kernel(params, inputs, dense):
        grad = inputs[1]
        if stype_of(grad) != "row_sparse" or stype_of(inputs[0]) == "csr":
            return None
        check = _CHECKS.get(op)
        if check is not None:
            check(params)
        weight, _, *states = (np.array(to_dense(a)) for a in inputs)
        if getattr(params, "lazy_update", True):
            rows = grad.indices
            sub = [s[rows] for s in states]
            weight[rows] = rule(np, params, weight[rows], grad.data, *sub)
            for s, part in zip(states, sub):
                s[rows] = part
        else:
            rows = None
            weight = rule(np, params, weight, to_dense(grad), *states)
        return [_like(inputs[0], weight, rows)] + [
            _like(a, s, rows) for a, s in zip(inputs[2:], states)]
    return kernel


def _like(source, new, rows):
    """``new`` in ``source``'s storage type: a row_sparse one keeps its rows and ``rows``."""
    if stype_of(source) != "row_sparse":
        return new
    if rows is None or len(source.indices) == new.shape[0]:     # every row stored
        keep = np.arange(new.shape[0], dtype=np.int64)
    else:       # a mask, not np.union1d: its sort took 0.8 s for a 1M-row weight
        stored = np.zeros(new.shape[0], bool)
        stored[source.indices] = True
        stored[rows] = True
        keep = np.flatnonzero(stored).astype(np.int64)
    return RowSparseStorage(new[keep], keep, new.shape)


def _no_wd(params):
    if params.wd != 0:
        raise ParamError(f"_sparse_adagrad_update: weight decay is not supported, got "
                         f"wd={params.wd}")


_CHECKS = {"_sparse_adagrad_update": _no_wd}


# -- AdaGrad: one history per coordinate, or per row (group) ---------------------------------
class AdagradParam(Param):
    lr: float = Field(description="Learning rate")
    epsilon: float = Field(1e-7, description="Added to the history under the square root.")
    wd: float = Field(0.0, description="Weight decay (must be 0: MXNet's kernel has none).")
    rescale_grad: float = Field(1.0, description="Factor the gradient is multiplied by first.")
    clip_gradient: float = Field(-1.0, description="Bound on the rescaled gradient; negative "
                                                   "disables it.")


class GroupAdagradParam(Param):
    lr: float = Field(description="Learning rate")
    rescale_grad: float = Field(1.0, description="Factor the gradient is multiplied by first.")
    clip_gradient: float = Field(-1.0, description="Bound on the rescaled gradient; negative "
                                                   "disables it.")
    epsilon: float = Field(1e-5, description="Added to the history under the square root.")


def _adagrad(xp, p, w, g, history):
    g = _clip(xp, p.rescale_grad * g, p.clip_gradient)
    history[...] = history + g * g
    return w - p.lr * g / xp.sqrt(history + p.epsilon)


def _group_adagrad(xp, p, w, g, history):
    g = _clip(xp, p.rescale_grad * g, p.clip_gradient)
    history[...] = history + xp.mean(g * g, axis=1, keepdims=True)
    return w - p.lr * g / xp.sqrt(history + p.epsilon)


def _dense(rule, op):
    def compute(ctx, inputs, req, outputs, params):
        check = _CHECKS.get(op)
        if check is not None:
            check(params)
        new = rule(ctx.xp, params, *inputs)     # the history first: out may be the weight
        assign(outputs[0], req[0], new.astype(outputs[0].dtype, copy=False))
    return compute


def _shape(name, history_cols):
    """Weight and grad share a shape; the history is the same or ``(rows, 1)``."""
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        known = next((s for s in (ins[0], ins[1], outs[0]) if s is not None), None)
        if known is None:
            return ins, outs
        ins[0] = ins[1] = tuple(known)
        ins[2] = tuple(known) if history_cols is None else (known[0], history_cols)
        return ins, out_shapes(name, outs, [tuple(known)])
    return infer


def _register_adagrad(name, param, rule, history_cols, doc):
    (register_op(name).describe(doc).set_attr_parser(param)
        .set_num_inputs(3).set_num_outputs(1)
        .set_attr("FInferShape", _shape(name, history_cols))
        .set_attr("FInferType", FloatOnly(ElemwiseType(3, 1, name)))
        .set_attr("FCompute<cpu>", _dense(rule, name))
        .set_attr("FComputeSparse", _sparse_update(rule, name))
        .set_attr("FMutateInputs", lambda p: [2])
        .set_attr("TExamples", [{"inputs": [(4, 3), (4, 3), (4, history_cols or 3)],
                                 "domain": [(-1, 1), (-1, 1), (0, 1)],
                                 "params": {"lr": 0.1}}])
        .add_argument("weight", "NDArray-or-Symbol", "Weight")
        .add_argument("grad", "NDArray-or-Symbol", "Gradient")
        .add_argument("history", "NDArray-or-Symbol", "History"))


_register_adagrad("_sparse_adagrad_update", AdagradParam, _adagrad, None,
                  "AdaGrad: ``g = clip(rescale_grad*grad)``, ``history += g**2``, "
                  "``weight -= lr * g / sqrt(history + epsilon)``; with a row_sparse "
                  "gradient only its rows. Weight decay is not supported.")
_register_adagrad("_contrib_group_adagrad_update", GroupAdagradParam, _group_adagrad, 1,
                  "Group AdaGrad (one history value per row): ``g = clip(rescale_grad*grad)``, "
                  "``history += mean(g**2, axis=1, keepdims=True)``, "
                  "``weight -= lr * g / sqrt(history + epsilon)``; with a row_sparse "
                  "gradient only its rows.")

for _name, _rule in (("sgd_update", _sgd), ("sgd_mom_update", _sgd_mom),
                     ("adam_update", _adam), ("ftrl_update", _ftrl)):
    extend_op(_name).set_attr("FComputeSparse", _sparse_update(_rule, _name))
