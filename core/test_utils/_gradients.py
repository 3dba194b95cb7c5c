"""Forward, backward and finite-difference gradient checks.

MXNet's helpers take a Symbol. Until ``mx.sym`` exists they take a Python callable over
NDArrays (returning an NDArray or a list of them); a Symbol raises ParamError. Inputs are
named like a Symbol's arguments: by the dict keys of ``location``, or "0", "1", ... for a
list; outputs are named "output0", "output1", ....
"""

from __future__ import annotations

import numpy as np

from ..base import ParamError
from ._compare import _np, assert_almost_equal
from ._inputs import default_context
from ._tolerance import default_dtype, default_numeric_eps, get_tolerance

_FLOATS = tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64))


def _require_callable(sym, op: str) -> None:
    if hasattr(sym, "list_arguments"):
        raise ParamError(f"{op}: argument 'sym' is a Symbol, which mxnext does not support yet "
                         f"(mx.sym comes later); pass a Python callable over NDArrays instead")
    if not callable(sym):
        raise ParamError(f"{op}: argument 'sym' expected a Python callable over NDArrays, "
                         f"got {type(sym).__name__}")


def _no_aux(aux_states, op: str) -> None:
    if aux_states is not None:
        raise ParamError(f"{op}: argument 'aux_states' is for Symbols, which mxnext does not "
                         f"support yet; a callable keeps its state itself (got {aux_states!r})")


def _float_dtype(dtype, op: str, allow_asnumpy=False):
    if allow_asnumpy and isinstance(dtype, str) and dtype == "asnumpy":
        return None                                         # keep each input's own dtype
    if np.dtype(dtype) not in _FLOATS:
        raise ParamError(f"{op}: argument 'dtype' expected float16, float32 or float64"
                         f"{' or asnumpy' if allow_asnumpy else ''}, got {dtype}")
    return np.dtype(dtype)


def _named(location, op: str):
    """(names, numpy values, as_kwargs) of a list/tuple (positional) or dict (keyword) of arrays."""
    if isinstance(location, dict):
        return [str(k) for k in location], [_np(v) for v in location.values()], True
    if isinstance(location, (list, tuple)):
        return [str(i) for i in range(len(location))], [_np(v) for v in location], False
    raise ParamError(f"{op}: argument 'location' expected a list or dict of arrays, "
                     f"got {type(location).__name__}")


def _as_nd(value, ctx, dtype):
    """An NDArray of ``value`` on ``ctx`` in ``dtype`` (None: the value's own dtype)."""
    from .. import ndarray as nd
    value = _np(value)
    return nd.array(value, ctx=ctx, dtype=value.dtype if dtype is None else dtype)


def _call(fn, names, arrays, as_kwargs) -> list:
    out = fn(**dict(zip(names, arrays))) if as_kwargs else fn(*arrays)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _per_output(values, count: int, what: str, op: str) -> list:
    """A list/tuple, or a dict keyed by output name, as a list of ``count`` values."""
    if isinstance(values, dict):
        names = [f"output{i}" for i in range(count)]
        missing = [n for n in names if n not in values]
        if missing:
            raise ParamError(f"{op}: argument '{what}' expected keys {names}, missing {missing}")
        return [values[n] for n in names]
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    if len(values) != count:
        raise ParamError(f"{op}: argument '{what}' expected {count} arrays (one per output), "
                         f"got {len(values)}")
    return values


def _grad_reqs(grad_req, names, op: str) -> dict:
    """{input name: 'write' | 'add' | 'null'} from a str, a list (per input) or a dict."""
    if isinstance(grad_req, str):
        reqs = dict.fromkeys(names, grad_req)
    elif isinstance(grad_req, (list, tuple)):
        reqs = dict(zip(names, grad_req))
    else:
        reqs = {str(k): v for k, v in dict(grad_req).items()}
    bad = {n: r for n, r in reqs.items() if r not in ("write", "add", "null")}
    unknown = [n for n in reqs if n not in names]
    if bad or unknown:
        raise ParamError(f"{op}: argument 'grad_req' expected 'write', 'add' or 'null' for inputs "
                         f"among {names}, got bad reqs {bad}, unknown inputs {unknown}")
    return reqs


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Run callable ``sym`` on keyword numpy ``inputs``; its output(s) as numpy (one array, or a
    list for several outputs)."""
    _require_callable(sym, "simple_forward")
    from .. import autograd, ndarray as nd
    ctx = ctx or default_context()
    mode = autograd.train_mode if is_train else autograd.predict_mode
    with mode():
        outs = _call(sym, list(inputs), [nd.array(v, ctx=ctx) for v in inputs.values()], True)
    outs = [o.asnumpy() for o in outs]
    return outs[0] if len(outs) == 1 else outs


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=default_dtype(), *, projections=None, ctx=None, grad_nodes=None) -> dict:
    """Central-difference gradient of ``sum_i sum(out_i * projections[i])`` (of the plain sum of
    the outputs when ``projections`` is None) of callable ``executor`` at ``location``.

    Each input element in turn moves by ±eps/2 in ``dtype``; the difference is divided by the
    step as rounded in ``dtype`` and accumulated in float64. Returns ``{input name: numpy
    gradient in dtype}`` for every input (or the names in ``grad_nodes``).
    """
    op = "numeric_grad"
    _require_callable(executor, op)
    _no_aux(aux_states, op)
    dtype = _float_dtype(dtype, op)
    from .. import autograd, ndarray as nd
    ctx = ctx or default_context()
    names, values, as_kwargs = _named(location, op)
    values = [np.array(v, dtype=dtype) for v in values]
    mode = autograd.train_mode if use_forward_train else autograd.predict_mode

    def objective() -> float:
        with mode():
            outs = _call(executor, names, [nd.array(v, ctx=ctx, dtype=dtype) for v in values],
                         as_kwargs)
        weights = projections if projections is not None else [1.0] * len(outs)
        return sum(float(np.sum(o.asnumpy().astype(np.float64) * np.asarray(w, np.float64)))
                   for o, w in zip(outs, weights))

    step = dtype.type(eps / 2)
    grads = {}
    for name, v in zip(names, values):
        if grad_nodes is not None and name not in grad_nodes:
            continue
        g = np.zeros(v.shape, dtype=np.float64)
        flat, gflat = v.reshape(-1), g.reshape(-1)
        for i in range(flat.size):
            orig = flat[i]
            flat[i] = orig + step
            hi, f_plus = float(flat[i]), objective()
            flat[i] = orig - step
            lo, f_minus = float(flat[i]), objective()
            flat[i] = orig
            if hi == lo:
                raise ParamError(f"{op}: eps {eps} vanishes next to {name}[{i}] = {orig} in "
                                 f"{dtype.name}; pass a larger numeric_eps")
            gflat[i] = (f_plus - f_minus) / (hi - lo)
        grads[name] = g.astype(dtype)
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):
    """Check autograd's gradient of callable ``sym`` against finite differences.

    ``location``: a list (positional inputs) or dict (keyword inputs) of arrays, cast to
    ``dtype``. ``grad_nodes``: the inputs to check (names, or a dict name -> grad_req 'write',
    'add' or 'null'); default all, 'write'. As in MXNet, the outputs are weighted by a random
    projection (elements in [0.1, 1.1)), each gradient buffer starts as small random values
    ('add' must add to them, 'null' must leave them), backward runs in train mode and the
    finite differences in train mode unless ``use_forward_train=False``.
    """
    op = "check_numeric_gradient"
    _require_callable(sym, op)
    _no_aux(aux_states, op)
    if grad_stype_dict and any(s != "default" for s in grad_stype_dict.values()):
        raise ParamError(f"{op}: argument 'grad_stype_dict' expected 'default' storage only "
                         f"(mxnext has dense arrays only), got {grad_stype_dict}")
    dtype = _float_dtype(dtype, op)
    from .. import autograd, ndarray as nd
    ctx = ctx or default_context()
    names, values, as_kwargs = _named(location, op)
    if grad_nodes is None:
        reqs = dict.fromkeys(names, "write")
    elif isinstance(grad_nodes, dict):
        reqs = _grad_reqs(grad_nodes, names, op)
    else:
        reqs = _grad_reqs({str(k): "write" for k in grad_nodes}, names, op)

    xs = [nd.array(v, ctx=ctx, dtype=dtype) for v in values]
    for name, x in zip(names, xs):           # unchecked inputs join the graph too, as 'null'
        x.attach_grad(grad_req=reqs.get(name, "null"))
    with autograd.record(train_mode=True):
        outs = _call(sym, names, xs, as_kwargs)
    projections = [np.random.rand(*o.shape) + 0.1 for o in outs]
    initial = {n: np.random.normal(0, 0.01, size=x.shape) for n, x in zip(names, xs) if n in reqs}
    for name, x in zip(names, xs):
        if name in reqs:
            nd.array(initial[name], ctx=ctx, dtype=dtype).copyto(x.grad)
    if any(r != "null" for r in reqs.values()):
        autograd.backward(outs, head_grads=[nd.array(p, ctx=ctx, dtype=o.dtype)
                                            for p, o in zip(projections, outs)])

    eps = get_tolerance(outs[0], numeric_eps, default_numeric_eps())
    if dtype != np.float64 and eps < 1e-5:
        raise ParamError(f"{op}: argument 'numeric_eps' expected >= 1e-5 for {dtype.name} "
                         f"(finite differences need a larger step below float64), got {eps}")
    numeric = numeric_grad(sym, location, eps=eps, use_forward_train=use_forward_train,
                           dtype=dtype, projections=projections, ctx=ctx,
                           grad_nodes=[n for n, r in reqs.items() if r != "null"])
    for name, x in zip(names, xs):
        if name not in reqs:
            continue
        got, req = x.grad.asnumpy(), reqs[name]
        if req == "add":
            expected, got = numeric[name], got - initial[name]
        else:
            expected = initial[name] if req == "null" else numeric[name]
        assert_almost_equal(expected, got, rtol, atol, (f"NUMERICAL_{name}", f"BACKWARD_{name}"))


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):
    """Run callable ``sym`` on ``location`` in predict mode and compare each output with
    ``expected`` (a list, or a dict keyed "output0", ...). Inputs are cast to ``dtype``
    (``"asnumpy"`` keeps each input's dtype). Returns the outputs (NDArrays)."""
    op = "check_symbolic_forward"
    _require_callable(sym, op)
    _no_aux(aux_states, op)
    dtype = _float_dtype(dtype, op, allow_asnumpy=True)
    from .. import autograd
    ctx = ctx or default_context()
    names, values, as_kwargs = _named(location, op)
    with autograd.predict_mode():
        outs = _call(sym, names, [_as_nd(v, ctx, dtype) for v in values], as_kwargs)
    for i, (want, out) in enumerate(zip(_per_output(expected, len(outs), "expected", op), outs)):
        assert_almost_equal(want, out, rtol, atol, (f"EXPECTED_output{i}", f"FORWARD_output{i}"),
                            equal_nan=equal_nan)
    return outs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """Run callable ``sym`` forward in train mode and backward from ``out_grads`` (a list, a dict
    keyed "output0", ..., or None for ones) and compare input gradients with ``expected`` (a
    list per input, or a dict by input name; inputs not in it get no gradient).

    ``grad_req`` ('write', 'add' or 'null'; one str, a list per input or a dict) applies to
    gradient buffers that start as random normal values, as in MXNet: 'add' must add to them
    and 'null' must leave them. Returns ``{input name: gradient NDArray}``.
    """
    op = "check_symbolic_backward"
    _require_callable(sym, op)
    _no_aux(aux_states, op)
    if grad_stypes and any(s not in (None, "default") for s in grad_stypes.values()):
        raise ParamError(f"{op}: argument 'grad_stypes' expected 'default' storage only "
                         f"(mxnext has dense arrays only), got {grad_stypes}")
    dtype = _float_dtype(dtype, op, allow_asnumpy=True)
    from .. import autograd, ndarray as nd
    ctx = ctx or default_context()
    names, values, as_kwargs = _named(location, op)
    if isinstance(expected, dict):
        expected = {str(k): _np(v) for k, v in expected.items()}
    else:
        expected = dict(zip(names, (_np(v) for v in expected)))
    unknown = [n for n in expected if n not in names]
    if unknown:
        raise ParamError(f"{op}: argument 'expected' names inputs {unknown}, expected names "
                         f"among {names}")
    reqs = _grad_reqs(grad_req, names, op)
    initial = {n: np.random.normal(size=expected[n].shape) for n in sorted(expected)}

    xs = [_as_nd(v, ctx, dtype) for v in values]
    grads = {}
    for name, x in zip(names, xs):           # inputs without expectations join as 'null'
        x.attach_grad(grad_req=reqs.get(name, "write") if name in expected else "null")
        if name in expected:
            grad_dtype = expected[name].dtype if dtype is None else dtype
            nd.array(initial[name], ctx=ctx, dtype=grad_dtype).copyto(x.grad)
            grads[name] = x.grad
    with autograd.record(train_mode=True):
        outs = _call(sym, names, xs, as_kwargs)
    heads = None
    if out_grads is not None:
        heads = [g if hasattr(g, "asnumpy") else _as_nd(g, ctx, dtype)
                 for g in _per_output(out_grads, len(outs), "out_grads", op)]
    if any(reqs.get(n, "write") != "null" for n in expected):
        autograd.backward(outs, head_grads=heads)

    for name in expected:
        req, got = reqs.get(name, "write"), grads[name].asnumpy()
        want = initial[name] if req == "null" else expected[name]
        if req == "add":
            got = got - initial[name]
        assert_almost_equal(want, got, rtol, atol, (f"EXPECTED_{name}", f"BACKWARD_{name}"),
                            equal_nan=equal_nan)
    return grads
