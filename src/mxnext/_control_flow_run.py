"""Running the control-flow ops (``_control_flow_ops``): each application's body graphs run
through their ``CachedOp``, step by step, on a custom-op thread (``_custom``'s), as MXNet's
``LoopState`` runs them.

The forward works on copies of its inputs, which the state keeps; when training it marks
them for autograd and records the steps, and the backward op asks autograd for their
gradients given the output gradients (so the body's own gradient rules, through its
``CachedOp``, do the work). A backward after an unrecorded forward records the run first.
"""

from __future__ import annotations

import numpy as np

from ._custom import _REQ, _submit, _wrap
from ._runtime.base import MXNetError

__all__ = ["LoopState", "forward", "backward", "placed"]


class LoopState:
    """One application: its parameters; after a forward, copies of its inputs, and after
    a recorded run the results they were recorded into (the copies marked for autograd)."""

    __slots__ = ("params", "inputs", "results", "shapes", "train")

    def __init__(self, params, ctx, in_shapes, in_dtypes):
        self.params = params
        self.inputs = self.results = self.shapes = None
        self.train = False

    def run(self, record):
        """The bodies run on the input copies (recorded for autograd if ``record``)."""
        from . import autograd
        if not record:
            with autograd.pause(train_mode=self.train):
                return _RUN[self.params.kind](self.params, self.inputs, self.shapes)
        for x in self.inputs:
            x.attach_grad()
        with autograd.record(train_mode=self.train):
            self.results = _RUN[self.params.kind](self.params, self.inputs, self.shapes)
        return self.results


def forward(state, ctx, inputs, req, outputs):
    """``FStatefulCompute`` of ``_foreach`` / ``_while_loop`` / ``_cond``: recorded when
    training; a backward after a forward in predict mode (``autograd.record(train_mode=
    False)``) records the run again from the input copies."""
    ins, outs = _wrap(inputs, ctx), _wrap(outputs, ctx)

    def call():
        state.inputs = [x.copy() for x in ins]
        state.shapes, state.train, state.results = [o.shape for o in outs], ctx.is_train, None
        for r, o, q in zip(state.run(ctx.is_train), outs, req):
            _assign(o, q, r)
        for x in state.inputs:
            x.wait_to_read()
    _submit(call, ctx, ins + outs, f"{state.params.kind} forward", state.params.kind)


def backward(state, ctx, inputs, req, outputs):
    """``FStatefulCompute`` of the ``_backward_*`` ops: the gradients of the forward's inputs
    given its output gradients (its inputs: those, then the forward's outputs)."""
    ograds, igrads = _wrap(inputs[:len(inputs) // 2], ctx), _wrap(outputs, ctx)

    def call():
        from . import autograd
        from ._runtime import tape
        if state.inputs is None:
            raise MXNetError(f"the backward of {state.params.kind} ran before its forward")
        results = state.results if state.results is not None else state.run(True)
        pairs = [(r, g.copy()) for r, g in zip(results, ograds) if tape.has_history(r)]
        for x in state.inputs:
            x.grad[:] = 0
        if pairs:
            autograd.backward([r for r, _ in pairs], [g for _, g in pairs], retain_graph=True,
                              train_mode=state.train)
        for x, o, q in zip(state.inputs, igrads, req):
            _assign(o, q, x.grad)
        for _, g in pairs:
            g.wait_to_read()
    _submit(call, ctx, ograds + igrads, f"{state.params.kind} backward",
            f"_backward_{state.params.kind}")


def _assign(out, req, value):
    kind = _REQ[req]
    if kind in ("write", "inplace"):
        out[:] = value
    elif kind == "add":
        out += value


# -- the loops ------------------------------------------------------------------------------
def _as_list(res):
    return list(res) if isinstance(res, (list, tuple)) else [res]


def placed(size, *groups):
    """A list of ``size`` with ``values[j]`` at ``locs[j]`` for each ``(locs, values)``."""
    out = [None] * size
    for locs, values in groups:
        for loc, v in zip(locs, values):
            out[loc] = v
    return out


def _foreach(p, ins, out_shapes):
    from .ndarray import op
    nd, ns = len(p.in_data_locs), len(p.in_state_locs)
    data, states, rest = ins[:nd], ins[nd:nd + ns], ins[nd + ns:]
    body, size = p.subgraphs.cached(0), p.subgraphs.num_inputs(0)
    steps = []
    for i in range(data[0].shape[0]):
        args = placed(size, (p.in_data_locs, [d[i] for d in data]),
                       (p.in_state_locs, states), (p.remain_locs, rest))
        res = _as_list(body(*args))
        steps.append(res[:p.num_out_data])
        states = res[p.num_out_data:]
    return [op.stack(*column, axis=0) for column in zip(*steps)] + list(states)


def _true(cached, args) -> bool:
    from . import autograd
    with autograd.pause():
        value = _as_list(cached(*args))[0]
    if value.size != 1:
        raise MXNetError(f"the condition of a control-flow op must have one element, got "
                         f"shape {value.shape}")
    return bool(value.asscalar())


def _while_loop(p, ins, out_shapes):
    subs = p.subgraphs
    cond_in = [ins[k] for k in p.cond_input_locs]
    func_in = [ins[k] for k in p.func_input_locs]
    steps = []
    while len(steps) < p.max_iterations and _true(subs.cached(0), cond_in):
        res = _as_list(subs.cached(1)(*func_in))
        steps.append(res[:p.num_out_data])
        for i, j in enumerate(p.func_var_locs):
            func_in[j] = res[p.num_out_data + i]
            for k, pos in enumerate(p.cond_input_locs):
                if pos == p.func_input_locs[j]:
                    cond_in[k] = func_in[j]
    outs = [_padded(steps, i, out_shapes[i], ins[0]) for i in range(p.num_out_data)]
    return outs + [func_in[j] for j in p.func_var_locs]


def _padded(steps, i, shape, like):
    """Output ``i``'s rows of the steps run, then zeros up to ``shape[0]`` rows."""
    from .ndarray import op
    from .ndarray._copies import filled
    rows = [op.expand_dims(s[i], axis=0) for s in steps]
    if len(rows) < shape[0]:
        dtype = np.dtype(rows[0].dtype if rows else np.float32)
        rows.append(filled((shape[0] - len(rows), *shape[1:]), dtype, like.context, 0))
    return rows[0] if len(rows) == 1 else op.concat(*rows, dim=0)


def _cond(p, ins, out_shapes):
    subs = p.subgraphs
    if _true(subs.cached(0), [ins[k] for k in p.cond_input_locs]):
        return _as_list(subs.cached(1)(*[ins[k] for k in p.then_input_locs]))
    return _as_list(subs.cached(2)(*[ins[k] for k in p.else_input_locs]))


def _cached_op(p, ins, out_shapes):
    return _as_list(p.subgraphs.cached(0)(*ins))


_RUN = {"foreach": _foreach, "while_loop": _while_loop, "cond": _cond, "cached_op": _cached_op}
