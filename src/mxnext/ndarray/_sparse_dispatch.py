"""Running an op on sparse arrays (MXNet's storage dispatch, ``Imperative::Invoke`` with
``FInferStorageType``).

An op may carry ``FComputeSparse``: ``kernel(params, inputs, dense) -> outputs or None``,
with inputs as host storages (``sparse_storage``) or numpy arrays, and ``dense(*arrays)``
running the op's own dense kernel on numpy arrays (zero-preserving ops map the stored
values with it). The kernel returns the visible outputs, each a storage or a numpy array,
in the storage type MXNet's ``FInferStorageType`` gives; None means MXNet has no sparse
kernel for these storage types. A stateful op's kernel (one with ``FCreateOpState``) returns
``(outputs, record)``: what autograd keeps for its backward, ``(state, input shapes, input
dtypes)`` as the dense path records. Then, and for ops without the attribute, the storage
fallback runs: sparse inputs are densified, the dense kernel runs, outputs are dense
(MXNet logs this; here it is a debug log record). An ``out=`` array receives the results
in its own storage type.
"""

from __future__ import annotations

import logging

import numpy as np

from .._runtime import tape as _tape
from .._runtime.base import MXNetError
from ._array import NDArray
from ._imperative import from_host, invoke, invoke_params, use_sparse_dispatch
from ._sparse_array import BaseSparseNDArray, make_sparse
from .sparse_storage import CSRStorage, RowSparseStorage, stype_of

__all__ = ["dispatch", "output_stypes"]

_log = logging.getLogger(__name__)


def dispatch(opdef, inputs, kwargs, out, ctx, params=None):
    """Run ``opdef`` on ``inputs`` (some sparse) or into ``out`` (some sparse); with
    ``params`` (parsed, as graph nodes hold them) instead of ``kwargs``, every output is
    returned, as a list."""
    for i, a in enumerate(inputs):
        if not isinstance(a, NDArray):
            raise MXNetError(f"Operator {opdef.name!r}: input {i} must be an NDArray, got "
                             f"{type(a).__name__} {a!r:.60}")
    ctx = ctx or (inputs[0].context if inputs else None)
    if kwargs is not None:
        params = opdef.parse_params(dict(kwargs))
        run = lambda arrays, o: invoke(opdef, arrays, kwargs, o, ctx)   # noqa: E731
    else:
        run = lambda arrays, o: invoke_params(opdef, params, arrays, o, ctx,   # noqa: E731
                                              all_outputs=True)
    results, state = _sparse_kernel(opdef, params, inputs, run, ctx)
    if results is None:
        _log.debug("storage fallback: %s on %s", opdef.name, [a.stype for a in inputs])
        dense = [_densified(a) for a in inputs]
        if out is None or not any(isinstance(o, BaseSparseNDArray) for o in _listed(out)):
            result = run(dense, out)
            _write_back(opdef, params, inputs, dense)
            return result
        results = _listed(run(dense, None))
        _write_back(opdef, params, inputs, dense)
    elif _tape.state.recording:
        _record(opdef, params, inputs, results, state)
    if out is None:
        return results[0] if len(results) == 1 and kwargs is not None else results
    for target, value in zip(_listed(out), results):
        _write(target, value)
    return out


def _sparse_kernel(opdef, params, inputs, run, ctx):
    """(The outputs (NDArrays) of the op's sparse kernel, or None for the fallback; what
    recording keeps of a stateful op's state)."""
    kernel = opdef.get_attr("FComputeSparse")
    if kernel is None or not any(isinstance(a, BaseSparseNDArray) for a in inputs):
        return None, None
    hosts = [a._host() if isinstance(a, BaseSparseNDArray) else a.asnumpy() for a in inputs]
    results, state = kernel(params, hosts, _dense_kernel(run, ctx)), None
    if opdef.get_attr("FCreateOpState") is not None and results is not None:
        results, state = results
    if results is None:
        return None, None
    results = [from_host(np.ascontiguousarray(r), ctx) if isinstance(r, np.ndarray)
               else make_sparse(r, ctx) for r in results]
    mutated = _mutated(opdef, params)
    if mutated:          # the new values of the mutated inputs follow the outputs
        visible = len(results) - len(mutated)
        for i, value in zip(mutated, results[visible:]):
            _write(inputs[i], value)
        results = results[:visible]
    return results, state


def _dense_kernel(run, ctx):
    """The ``dense`` argument of a sparse kernel: the op's dense kernel on numpy arrays."""
    def dense(*arrays):
        outs = run([from_host(np.ascontiguousarray(x), ctx) for x in arrays], None)
        return [o.asnumpy() for o in _listed(outs)]
    return dense


def output_stypes(opdef, params, stypes, shapes, dtypes, ctx):
    """MXNet's ``FInferStorageType`` of one graph node: the storage types of the op's
    visible outputs for inputs of storage types ``stypes`` (shapes, dtypes), or None for
    the storage fallback (dense outputs). The op's sparse kernel decides, run on inputs of
    those storage types that store nothing: the storage type a kernel gives depends on
    the inputs' storage types, shapes and the parameters, never on the stored values. A
    kernel refusing the storage types (BatchNorm's ``fix_gamma``) raises here."""
    kernel = opdef.get_attr("FComputeSparse")
    if kernel is None or all(s == "default" for s in stypes) \
            or opdef.get_attr("FCreateOpState") is not None:    # a Custom op's own code
        return None
    hosts = [_nothing_stored(*a) for a in zip(stypes, shapes, dtypes)]
    run = lambda arrays, o: invoke_params(opdef, params, arrays, o, ctx,   # noqa: E731
                                          all_outputs=True)
    results = kernel(params, hosts, _dense_kernel(run, ctx))
    if results is None:
        return None
    return [stype_of(r) for r in results[:len(results) - len(_mutated(opdef, params))]]


def _nothing_stored(stype, shape, dtype):
    """An array of ``stype`` storing no values (dense: zeros, allocated when first read)."""
    if stype == "csr":
        return CSRStorage(np.zeros(0, dtype), np.zeros(0, np.int64),
                          np.zeros(shape[0] + 1, np.int64), tuple(shape))
    if stype == "row_sparse":
        return RowSparseStorage(np.zeros((0, *shape[1:]), dtype), np.zeros(0, np.int64),
                                tuple(shape))
    return np.zeros(shape, dtype)


def _mutated(opdef, params):
    """The indices of the inputs the op writes (``FMutateInputs``: an optimizer's states)."""
    mutate = opdef.get_attr("FMutateInputs")
    return list(mutate(params)) if mutate is not None else []


def _write_back(opdef, params, inputs, dense):
    """After the fallback: sparse inputs the op mutated take the values their dense copies
    received."""
    for i in _mutated(opdef, params):
        if isinstance(inputs[i], BaseSparseNDArray):
            inputs[i]._take(dense[i])


def _densified(a):
    """``a`` as a dense array; a sparse one's dense copy keeps its autograd history, so an
    op recorded on it differentiates with respect to the sparse array."""
    if not isinstance(a, BaseSparseNDArray):
        return a
    dense = a.tostype("default")
    dense._ag = a._ag
    return dense


def _record(opdef, params, inputs, results, state=None):
    """Put a sparse kernel's call on the autograd tape: its gradient rule runs on dense
    copies of the inputs and outputs (the gradient buffers give the gradients' storage),
    except CSR inputs (a sparse model's data: its dense copy can be vastly larger), which
    the rule's ops read through their own storage dispatch."""
    outs = [_densified(r) for r in results]
    _tape.record(opdef, params, [a if a.stype == "csr" else _densified(a) for a in inputs],
                 outs, state=state)
    for r, o in zip(results, outs):
        r._ag = o._ag


def _listed(x):
    return [x] if isinstance(x, NDArray) else list(x)


def _write(target, value):
    if isinstance(target, BaseSparseNDArray):
        target._take(value)
    elif isinstance(value, BaseSparseNDArray):
        value.copyto(target)
    else:
        value.astype(target.dtype, copy=False).copyto(target)


use_sparse_dispatch(dispatch)
