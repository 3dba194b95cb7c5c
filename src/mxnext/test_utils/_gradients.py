"""Forward, backward and finite-difference gradient checks: MXNet's, over a Symbol.

Each also takes a Python callable over NDArrays (returning an NDArray or a list of them) in
the Symbol's place, mxnext's addition for code without symbols: it runs under autograd, its
inputs are named by the dict keys of ``location`` (or "0", "1", ... for a list) and its
outputs "output0", "output1", .... ``aux_states`` are for Symbols only.
"""

from __future__ import annotations

from .._runtime.base import ParamError
from . import _callable, _symbolic
from ._args import check_stypes, is_symbol
from ._inputs import default_context
from ._tolerance import default_dtype


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Run ``sym`` on keyword numpy ``inputs`` (arguments by name; NDArrays in the default
    dtype, float32); its output(s) as numpy: one array, or a list for several outputs."""
    ctx = ctx or default_context()
    form = _symbolic if is_symbol(sym, "simple_forward") else _callable
    outs = form.simple_forward(sym, ctx, is_train, inputs)
    return outs[0] if len(outs) == 1 else outs


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=default_dtype(), *, projections=None, ctx=None, grad_nodes=None) -> dict:
    """Central-difference gradient at ``location``; ``{argument name: numpy gradient in dtype}``.

    For an ``Executor`` (MXNet's form): of ``sum(outputs[0])``, with respect to each argument
    in ``location`` (a dict by name, or a list in argument order); ``aux_states`` (dict) are
    written back before every forward, since training mode may update them. For a callable:
    of ``sum_i sum(out_i * projections[i])`` (the plain sum when ``projections`` is None), for
    every input or those in ``grad_nodes``.

    Each element in turn moves by ±eps/2 in ``dtype``; the difference is divided by the step
    as rounded in ``dtype`` and accumulated in float64 (MXNet divides by ``eps`` and sums in
    the output's dtype). Integer arguments of an executor get zeros, as in MXNet.
    """
    from ..executor.executor import Executor
    if isinstance(executor, Executor):
        if projections is not None or grad_nodes is not None:
            raise ParamError("numeric_grad: arguments 'projections' and 'grad_nodes' are for a "
                             "callable; for an Executor, pass only the arguments to step in "
                             "'location'")
        return _symbolic.numeric_grad(executor, location, aux_states, eps, use_forward_train,
                                      dtype)
    if not callable(executor):
        raise ParamError(f"numeric_grad: argument 'executor' expected an Executor or a Python "
                         f"callable over NDArrays, got {type(executor).__name__}")
    _callable.no_aux(aux_states, "numeric_grad")
    return _callable.numeric_grad(executor, location, eps, use_forward_train, dtype, projections,
                                  ctx, grad_nodes)


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):
    """Check the backward of ``sym`` against finite differences, as MXNet does.

    ``location``: the arguments (a list in ``list_arguments()`` order, or a dict by name, all
    of them), cast to ``dtype``; ``aux_states`` likewise. ``grad_nodes``: the arguments to
    check (names, or a dict name -> grad_req 'write', 'add' or 'null'); default all, 'write'.
    The output is weighted by a random projection (elements in [0.1, 1.1)) and the backward
    runs from it in train mode, each gradient buffer starting as small random values ('add'
    must add to them, 'null' must leave them); the finite differences run in train mode unless
    ``use_forward_train=False``. ``numeric_eps`` defaults by the output's dtype and must be at
    least 1e-5 below float64. ``grad_stype_dict``: storage types by name (a sparse one is
    computed through the storage fallback and compared by value). A Symbol must have
    one output; a callable may have several, each with its own projection.
    """
    op = "check_numeric_gradient"
    check_stypes(grad_stype_dict, "grad_stype_dict", op)
    ctx = ctx or default_context()
    if is_symbol(sym, op):
        _symbolic.check_numeric_gradient(sym, location, aux_states, numeric_eps, rtol, atol,
                                         grad_nodes, use_forward_train, ctx, dtype)
    else:
        _callable.no_aux(aux_states, op)
        _callable.check_numeric_gradient(sym, location, numeric_eps, rtol, atol, grad_nodes,
                                         use_forward_train, ctx, dtype)


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):
    """Run ``sym`` on ``location`` (and ``aux_states``) in predict mode and compare its outputs
    with ``expected``: a list (the first outputs, as MXNet zips them) or a dict by output name.
    Inputs are cast to ``dtype`` (``"asnumpy"`` keeps each input's dtype; NDArray inputs of a
    Symbol are bound as they are). Returns the outputs (NDArrays)."""
    op = "check_symbolic_forward"
    ctx = ctx or default_context()
    if is_symbol(sym, op):
        return _symbolic.check_symbolic_forward(sym, location, expected, rtol, atol, aux_states,
                                                ctx, equal_nan, dtype)
    _callable.no_aux(aux_states, op)
    return _callable.check_symbolic_forward(sym, location, expected, rtol, atol, ctx, equal_nan,
                                            dtype)


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """Run ``sym`` forward in train mode and backward from ``out_grads`` and compare the
    argument gradients with ``expected``.

    ``out_grads``: a list or a dict by output name (None: a Symbol's outputs must be losses;
    a callable's get ones). ``expected``: a list (the first arguments, in order) or a dict by
    name; arguments not in it get no gradient buffer. ``grad_req`` ('write', 'add' or 'null';
    one str, a list per argument or a dict) applies to buffers that start as random normal
    values, as in MXNet: 'add' must add to them and 'null' must leave them. ``grad_stypes``:
    storage types by name: a Symbol's buffer of a sparse type starts as an empty sparse array
    (as MXNet's) and keeps its type. Returns ``{argument name: gradient NDArray}``.
    """
    op = "check_symbolic_backward"
    check_stypes(grad_stypes, "grad_stypes", op)
    ctx = ctx or default_context()
    if is_symbol(sym, op):
        return _symbolic.check_symbolic_backward(sym, location, out_grads, expected, rtol, atol,
                                                 aux_states, grad_req, ctx, equal_nan, dtype,
                                                 grad_stypes)
    _callable.no_aux(aux_states, op)
    return _callable.check_symbolic_backward(sym, location, out_grads, expected, rtol, atol,
                                             grad_req, ctx, equal_nan, dtype)
