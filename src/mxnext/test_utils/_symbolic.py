"""The gradient checks over a Symbol, as MXNet runs them: bind an executor to the inputs, run it
forward (and backward), compare. Inputs are the symbol's arguments (``list_arguments()``),
auxiliary states its ``list_auxiliary_states()``, outputs are named by ``list_outputs()``.
"""

from __future__ import annotations

import numpy as np

from .._runtime.base import ParamError
from ._args import (central_differences, fill, float_dtype, grad_reqs, node_reqs,
                    per_output)
from ._callable import check_eps, compare_grad
from ._compare import _np, assert_almost_equal
from ._sparse import create_sparse_array
from ._tolerance import default_numeric_eps, get_tolerance

_PROJ = "__random_proj"


def _nd(value, ctx, dtype):
    """An NDArray of ``value`` on ``ctx`` in ``dtype`` (None: the value's own dtype)."""
    from .. import ndarray as nd
    value = _np(value)
    return nd.array(value, ctx=ctx, dtype=value.dtype if dtype is None else dtype)


def _by_name(values, names, what: str, op: str) -> dict:
    """A list (in ``names`` order) or dict of values, keyed by every one of ``names``.

    A list longer than ``names`` is paired by ``zip`` as MXNet does: the extra arrays are
    ignored (MXNet's own tests pass a bias to a ``no_bias`` op). A shorter one leaves an input
    unbound, which MXNet reports at bind time and this reports here."""
    if isinstance(values, dict):
        if set(map(str, values)) != set(names):
            raise ParamError(f"{op}: argument '{what}' expected values for exactly {names}, got "
                             f"keys {sorted(map(str, values))}")
        return {str(k): v for k, v in values.items()}
    if isinstance(values, (list, tuple)):
        if len(values) < len(names):
            raise ParamError(f"{op}: argument '{what}' expected {len(names)} arrays (one for "
                             f"each of {names}), got {len(values)}")
        return dict(zip(names, values))
    raise ParamError(f"{op}: argument '{what}' expected a list or dict of arrays, got "
                     f"{type(values).__name__}")


def parse_location(sym, location, ctx, dtype, op: str) -> dict:
    """{argument: NDArray}, sorted by name. Arrays are made on ``ctx`` in ``dtype`` (None: their
    own); NDArrays are bound as given, as in MXNet."""
    from ..ndarray import NDArray
    location = _by_name(location, sym.list_arguments(), "location", op)
    return {k: v if isinstance(v, NDArray) else _nd(v, ctx, dtype)
            for k, v in sorted(location.items())}


def parse_aux_states(sym, aux_states, ctx, dtype, op: str):
    """{auxiliary state: NDArray on ``ctx`` in ``dtype``}, or None for a symbol without any."""
    names = sym.list_auxiliary_states()
    if aux_states is None:
        if names:
            raise ParamError(f"{op}: argument 'aux_states' expected arrays for the symbol's "
                             f"auxiliary states {names}, got None")
        return None
    return {k: _nd(v, ctx, dtype) for k, v in _by_name(aux_states, names, "aux_states",
                                                         op).items()}


def simple_forward(sym, ctx, is_train, inputs):
    from .. import ndarray as nd
    executor = sym.bind(ctx, args={k: nd.array(v, ctx=ctx) for k, v in inputs.items()})
    executor.forward(is_train=is_train)
    return [o.asnumpy() for o in executor.outputs]


def numeric_grad(executor, location, aux_states, eps, use_forward_train, dtype):
    """MXNet's ``numeric_grad``: the finite-difference gradient of ``sum(outputs[0])`` of
    ``executor`` with respect to each argument in ``location``, aux states reset to
    ``aux_states`` before every forward."""
    op = "numeric_grad"
    dtype = float_dtype(dtype, op)
    args = list(executor.arg_dict)
    if isinstance(location, (list, tuple)):
        location = dict(zip(args, location))
    location = {str(k): _np(v) for k, v in location.items()}
    aux_states = None if aux_states is None else {str(k): _np(v) for k, v in aux_states.items()}
    unknown = [k for k in location if k not in executor.arg_dict]
    unknown += [k for k in aux_states or () if k not in executor.aux_dict]
    if unknown:
        raise ParamError(f"{op}: arguments {unknown} are not the executor's; it has arguments "
                         f"{args} and auxiliary states {list(executor.aux_dict)}")
    for k, v in location.items():
        fill(executor.arg_dict[k], v.astype(dtype))

    def objective(k, x) -> float:
        fill(executor.arg_dict[k], x)
        for name, value in (aux_states or {}).items():
            fill(executor.aux_dict[name], value)
        executor.forward(is_train=use_forward_train)
        return float(np.sum(executor.outputs[0].asnumpy(), dtype=np.float64))

    grads = {}
    for k, v in location.items():
        if v.dtype.kind != "f":                   # integer inputs (labels, indices): no steps
            grads[k] = np.zeros(v.shape, dtype=dtype)
            continue
        value = v.astype(dtype)
        grads[k] = central_differences(value, eps, lambda x, k=k: objective(k, x), k, op)
        fill(executor.arg_dict[k], value)
    return grads


def check_numeric_gradient(sym, location, aux_states, numeric_eps, rtol, atol, grad_nodes,
                           use_forward_train, ctx, dtype):
    """MXNet's: bind ``sym * __random_proj`` and check its backward from ones (what
    ``make_loss`` hands back) against finite differences."""
    op = "check_numeric_gradient"
    dtype = float_dtype(dtype, op)
    from .. import ndarray as nd, symbol
    names, outputs = sym.list_arguments(), sym.list_outputs()
    location = parse_location(sym, location, ctx, dtype, op)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux = parse_aux_states(sym, aux_states, ctx, dtype, op)
    aux_npy = None if aux is None else {k: v.asnumpy() for k, v in aux.items()}
    reqs = node_reqs(grad_nodes, names, op)
    if len(outputs) != 1:
        raise ParamError(f"{op}: argument 'sym' expected a symbol with one output (it is "
                         f"weighted by one random projection), got outputs {outputs}; check "
                         f"them one at a time with sym[i]")
    _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})

    # MXNet's draws, in its order: the projection (elements in [0.1, 1.1), not too small, so
    # the finite differences keep their precision), then a small random start for every
    # gradient buffer checked and for the projection's own (which gets no gradient)
    location[_PROJ] = nd.array(np.random.rand(*out_shapes[0]) + 0.1, ctx=ctx, dtype=dtype)
    draws = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in reqs}
    draws[_PROJ] = np.random.normal(0, 0.01, size=out_shapes[0])
    args_grad = {k: nd.array(v, ctx=ctx, dtype=dtype) for k, v in draws.items()}

    executor = (sym * symbol.Variable(_PROJ)).bind(ctx, args=location, args_grad=args_grad,
                                                   grad_req=reqs, aux_states=aux)
    executor.forward(is_train=True)
    eps = get_tolerance(executor.outputs[0], numeric_eps, default_numeric_eps())
    check_eps(eps, dtype, op)
    out = executor.outputs[0]
    executor.backward([nd.ones(out.shape, ctx=ctx, dtype=out.dtype)])
    numeric = numeric_grad(executor, {k: location_npy[k] for k, r in reqs.items() if r != "null"},
                           aux_npy, eps, use_forward_train, dtype)
    for name, req in reqs.items():
        compare_grad(name, req, numeric.get(name), draws[name], args_grad[name],
                     ("NUMERICAL_", "BACKWARD_"), rtol, atol, op)


def check_symbolic_forward(sym, location, expected, rtol, atol, aux_states, ctx, equal_nan,
                           dtype):
    op = "check_symbolic_forward"
    dtype = float_dtype(dtype, op, allow_asnumpy=True)
    from .. import ndarray as nd
    outputs = sym.list_outputs()
    location = parse_location(sym, location, ctx, dtype, op)
    aux = parse_aux_states(sym, aux_states, ctx, dtype, op)
    expected = per_output(expected, outputs, "expected", op, allow_fewer=True)
    # as MXNet, bound with zeroed gradient buffers, then run in predict mode
    args_grad = {k: nd.zeros(v.shape, ctx=ctx, dtype=v.dtype if dtype is None else dtype)
                 for k, v in location.items()}
    executor = sym.bind(ctx, args=location, args_grad=args_grad, aux_states=aux)
    executor.forward(is_train=False)
    for name, want, out in zip(outputs, expected, executor.outputs):
        assert_almost_equal(want, out, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"),
                            equal_nan=equal_nan)
    return executor.outputs


def _grad_buffers(initial, expected, ctx, dtype, grad_stypes):
    """The gradient buffers: ``initial`` values, except an empty sparse array where
    ``grad_stypes`` names a sparse type (as MXNet's; its ``initial`` becomes zeros)."""
    buffers = {}
    for k, v in initial.items():
        stype = grad_stypes.get(k)
        if stype in (None, "default"):
            buffers[k] = _nd(v, ctx, expected[k].dtype if dtype is None else dtype)
        else:
            buffers[k] = create_sparse_array(v.shape, stype, density=0.0)
            initial[k] = np.zeros_like(v)
    return buffers


def check_symbolic_backward(sym, location, out_grads, expected, rtol, atol, aux_states,
                            grad_req, ctx, equal_nan, dtype, grad_stypes=None):
    op = "check_symbolic_backward"
    dtype = float_dtype(dtype, op, allow_asnumpy=True)
    from .. import ndarray as nd
    names, outputs = sym.list_arguments(), sym.list_outputs()
    location = parse_location(sym, location, ctx, dtype, op)
    aux = parse_aux_states(sym, aux_states, ctx, dtype, op)
    if isinstance(expected, dict):
        expected = {str(k): _np(v) for k, v in expected.items()}
    elif not isinstance(expected, (list, tuple)) or len(expected) > len(names):
        raise ParamError(f"{op}: argument 'expected' expected a dict, or a list of at most "
                         f"{len(names)} gradients (in the order of {names}), got "
                         f"{type(expected).__name__} of {len(expected)}")
    else:
        expected = {k: _np(v) for k, v in zip(names, expected)}
    unknown = [n for n in expected if n not in names]
    if unknown:
        raise ParamError(f"{op}: argument 'expected' names inputs {unknown}, expected names "
                         f"among {names}")
    reqs = grad_reqs(grad_req, names, op)
    missing = [n for n in expected if n not in reqs]
    if missing:
        raise ParamError(f"{op}: argument 'grad_req' expected a request for every input in "
                         f"'expected', missing {missing}")

    # the buffers start dirty (random normal, drawn in name order), as in MXNet
    initial = {k: np.random.normal(size=expected[k].shape) for k in sorted(expected)}
    args_grad = _grad_buffers(initial, expected, ctx, dtype, grad_stypes or {})
    executor = sym.bind(ctx, args=location, args_grad=args_grad, aux_states=aux, grad_req=reqs)
    executor.forward(is_train=True)
    heads = None
    if out_grads is not None:
        heads = [g if isinstance(g, nd.NDArray) else _nd(g, ctx, dtype)
                 for g in per_output(out_grads, outputs, "out_grads", op, allow_fewer=True,
                                     allow_more=True)]
    executor.backward(heads)

    for name in expected:
        compare_grad(name, reqs[name], expected[name], initial[name], args_grad[name],
                     ("EXPECTED_", "BACKWARD_"), rtol, atol, op, equal_nan)
    return args_grad
