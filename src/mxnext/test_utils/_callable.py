"""The gradient checks over a Python callable (mxnext's addition to MXNet's Symbol form).

Inputs are named like a Symbol's arguments: by the dict keys of ``location``, or "0", "1",
... for a list; outputs are named "output0", "output1", .... The callable runs under autograd
(recorded in train mode for backward, in predict mode for forward checks).
"""

from __future__ import annotations

import numpy as np

from .._runtime.base import ParamError
from ._args import central_differences, float_dtype, grad_reqs, node_reqs, per_output
from ._compare import _np, assert_almost_equal
from ._inputs import default_context
from ._tolerance import default_numeric_eps, get_tolerance


def output_names(count: int) -> list:
    return [f"output{i}" for i in range(count)]


def named(location, op: str):
    """(names, numpy values, as_kwargs) of a list/tuple (positional) or dict (keyword) of arrays."""
    if isinstance(location, dict):
        return [str(k) for k in location], [_np(v) for v in location.values()], True
    if isinstance(location, (list, tuple)):
        return [str(i) for i in range(len(location))], [_np(v) for v in location], False
    raise ParamError(f"{op}: argument 'location' expected a list or dict of arrays, "
                     f"got {type(location).__name__}")


def as_nd(value, ctx, dtype):
    """An NDArray of ``value`` on ``ctx`` in ``dtype`` (None: the value's own dtype)."""
    from .. import ndarray as nd
    value = _np(value)
    return nd.array(value, ctx=ctx, dtype=value.dtype if dtype is None else dtype)


def call(fn, names, arrays, as_kwargs) -> list:
    out = fn(**dict(zip(names, arrays))) if as_kwargs else fn(*arrays)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def no_aux(aux_states, op: str) -> None:
    if aux_states is not None:
        raise ParamError(f"{op}: argument 'aux_states' is for Symbols; a callable keeps its "
                         f"state itself (got {aux_states!r})")


def simple_forward(fn, ctx, is_train, inputs):
    from .. import autograd, ndarray as nd
    mode = autograd.train_mode if is_train else autograd.predict_mode
    with mode():
        outs = call(fn, list(inputs), [nd.array(v, ctx=ctx) for v in inputs.values()], True)
    return [o.asnumpy() for o in outs]


def numeric_grad(fn, location, eps, use_forward_train, dtype, projections, ctx, grad_nodes):
    op = "numeric_grad"
    dtype = float_dtype(dtype, op)
    from .. import autograd, ndarray as nd
    ctx = ctx or default_context()
    names, values, as_kwargs = named(location, op)
    values = [np.array(v, dtype=dtype) for v in values]
    mode = autograd.train_mode if use_forward_train else autograd.predict_mode

    def objective(k, x) -> float:
        arrays = [nd.array(x if j == k else v, ctx=ctx, dtype=dtype) for j, v in enumerate(values)]
        with mode():
            outs = call(fn, names, arrays, as_kwargs)
        weights = projections if projections is not None else [1.0] * len(outs)
        return sum(float(np.sum(o.asnumpy().astype(np.float64) * np.asarray(w, np.float64)))
                   for o, w in zip(outs, weights))

    return {name: central_differences(v, eps, lambda x, k=k: objective(k, x), name, op)
            for k, (name, v) in enumerate(zip(names, values))
            if grad_nodes is None or name in grad_nodes}


def check_numeric_gradient(fn, location, numeric_eps, rtol, atol, grad_nodes, use_forward_train,
                           ctx, dtype):
    op = "check_numeric_gradient"
    dtype = float_dtype(dtype, op)
    from .. import autograd, ndarray as nd
    names, values, as_kwargs = named(location, op)
    reqs = node_reqs(grad_nodes, names, op)

    xs = [nd.array(v, ctx=ctx, dtype=dtype) for v in values]
    for name, x in zip(names, xs):           # unchecked inputs join the graph too, as 'null'
        x.attach_grad(grad_req=reqs.get(name, "null"))
    with autograd.record(train_mode=True):
        outs = call(fn, names, xs, as_kwargs)
    projections = [np.random.rand(*o.shape) + 0.1 for o in outs]
    initial = {n: np.random.normal(0, 0.01, size=x.shape) for n, x in zip(names, xs) if n in reqs}
    for name, x in zip(names, xs):
        if name in reqs:
            nd.array(initial[name], ctx=ctx, dtype=dtype).copyto(x.grad)
    if any(r != "null" for r in reqs.values()):
        autograd.backward(outs, head_grads=[nd.array(p, ctx=ctx, dtype=o.dtype)
                                            for p, o in zip(projections, outs)])

    eps = get_tolerance(outs[0], numeric_eps, default_numeric_eps())
    check_eps(eps, dtype, op)
    numeric = numeric_grad(fn, location, eps, use_forward_train, dtype, projections, ctx,
                           [n for n, r in reqs.items() if r != "null"])
    for name, x in zip(names, xs):
        if name in reqs:
            compare_grad(name, reqs[name], numeric.get(name), initial[name], x.grad,
                         ("NUMERICAL_", "BACKWARD_"), rtol, atol, op)


def check_eps(eps, dtype, op) -> None:
    if dtype != np.float64 and eps < 1e-5:
        raise ParamError(f"{op}: argument 'numeric_eps' expected >= 1e-5 for {dtype.name} "
                         f"(finite differences need a larger step below float64), got {eps}")


def compare_grad(name, req, expected, initial, got, labels, rtol, atol, op, equal_nan=False):
    """MXNet's check of one gradient buffer that started as ``initial`` (the float64 draw it
    was made from, so 'add' is judged in float64 as in MXNet): 'write' holds ``expected``,
    'add' holds ``initial + expected``, 'null' still holds ``initial``."""
    names = (f"{labels[0]}{name}", f"{labels[1]}{name}")
    if req == "write":
        assert_almost_equal(expected, got, rtol, atol, names, equal_nan=equal_nan)
    elif req == "add":
        assert_almost_equal(expected, _np(got) - initial, rtol, atol, names, equal_nan=equal_nan)
    elif req == "null":
        assert_almost_equal(initial, got, rtol, atol, names, equal_nan=equal_nan)
    else:
        raise ParamError(f"{op}: grad_req of {name!r} expected 'write', 'add' or 'null', "
                         f"got {req!r}")


def check_symbolic_forward(fn, location, expected, rtol, atol, ctx, equal_nan, dtype):
    op = "check_symbolic_forward"
    dtype = float_dtype(dtype, op, allow_asnumpy=True)
    from .. import autograd
    names, values, as_kwargs = named(location, op)
    with autograd.predict_mode():
        outs = call(fn, names, [as_nd(v, ctx, dtype) for v in values], as_kwargs)
    outputs = output_names(len(outs))
    for name, want, out in zip(outputs, per_output(expected, outputs, "expected", op, True), outs):
        assert_almost_equal(want, out, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"),
                            equal_nan=equal_nan)
    return outs


def check_symbolic_backward(fn, location, out_grads, expected, rtol, atol, grad_req, ctx,
                            equal_nan, dtype):
    op = "check_symbolic_backward"
    dtype = float_dtype(dtype, op, allow_asnumpy=True)
    from .. import autograd
    names, values, as_kwargs = named(location, op)
    if isinstance(expected, dict):
        expected = {str(k): _np(v) for k, v in expected.items()}
    else:
        expected = dict(zip(names, (_np(v) for v in expected)))
    unknown = [n for n in expected if n not in names]
    if unknown:
        raise ParamError(f"{op}: argument 'expected' names inputs {unknown}, expected names "
                         f"among {names}")
    reqs = grad_reqs(grad_req, names, op)
    initial = {n: np.random.normal(size=expected[n].shape) for n in sorted(expected)}

    xs = [as_nd(v, ctx, dtype) for v in values]
    grads = {}
    for name, x in zip(names, xs):           # inputs without expectations join as 'null'
        x.attach_grad(grad_req=reqs.get(name, "write") if name in expected else "null")
        if name in expected:
            as_nd(initial[name], ctx, expected[name].dtype if dtype is None else dtype).copyto(
                x.grad)
            grads[name] = x.grad
    with autograd.record(train_mode=True):
        outs = call(fn, names, xs, as_kwargs)
    heads = None
    if out_grads is not None:
        heads = [g if hasattr(g, "asnumpy") else as_nd(g, ctx, dtype)
                 for g in per_output(out_grads, output_names(len(outs)), "out_grads", op)]
    if any(reqs.get(n, "write") != "null" for n in expected):
        autograd.backward(outs, head_grads=heads)

    for name in expected:
        compare_grad(name, reqs.get(name, "write"), expected[name], initial[name], grads[name],
                     ("EXPECTED_", "BACKWARD_"), rtol, atol, op, equal_nan)
    return grads
